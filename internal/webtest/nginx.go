package webtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Config says how a server serves its folder. The zero value is plain
// HTTP/1.1 with ranges, keep-alive and no authentication.
type Config struct {
	// TLS serves HTTPS with a certificate from a CA made for the test
	// (Server.TLSDir); HTTP2 also offers h2 through ALPN.
	TLS   bool
	HTTP2 bool
	// ClientCert asks for a client certificate signed by the test's CA
	// (requires TLS).
	ClientCert bool
	// BasicAuth ("user:password") and Bearer (a token) are required of
	// every request when set: 401 without them.
	BasicAuth string
	Bearer    string
	// Header ("Name: value") is required of every request when set: 403
	// without it.
	Header string
	// NoRanges switches range support off: every GET is answered 200
	// with the whole file and no Accept-Ranges.
	NoRanges bool
}

// Nginx serves root with nginx (Debian: nginx-light) as cfg says.
func Nginx(t testing.TB, root string, cfg Config) *Server {
	t.Helper()
	bin := Need(t, "nginx", "nginx-light")
	dir := t.TempDir()
	tlsDir := ""
	if cfg.TLS {
		tlsDir = filepath.Join(dir, "tls")
		if err := os.Mkdir(tlsDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := nbdtest.WriteTLSDir(tlsDir); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.BasicAuth != "" {
		user, pass, _ := strings.Cut(cfg.BasicAuth, ":")
		// nginx reads {PLAIN} passwords as they are: no crypt(3) needed.
		line := user + ":{PLAIN}" + pass + "\n"
		if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scheme := "http"
	if cfg.TLS {
		scheme = "https"
	}
	s := launch(t, scheme, func(port int) []string {
		conf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(conf, []byte(nginxConf(dir, root, tlsDir, port, cfg)), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log")}
	})
	s.TLSDir = tlsDir
	return s
}

// nginxConf is a configuration for one nginx process in the foreground
// (no master, so that one kill stops it and it runs as the test's user)
// whose every file lives in dir.
func nginxConf(dir, root, tlsDir string, port int, cfg Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "daemon off;\nmaster_process off;\npid %s/nginx.pid;\nerror_log %s/error.log;\n", dir, dir)
	b.WriteString("events { worker_connections 1024; }\nhttp {\n")
	fmt.Fprintf(&b, "  access_log %s/access.log;\n", dir)
	for _, tmp := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s/%s;\n", tmp, dir, tmp)
	}
	b.WriteString("  default_type application/octet-stream;\n  sendfile on;\n")
	b.WriteString("  keepalive_requests 100000;\n  keepalive_timeout 60s;\n")
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	if cfg.TLS {
		listen += " ssl"
		if cfg.HTTP2 {
			listen += " http2"
		}
	}
	fmt.Fprintf(&b, "  server {\n    listen %s;\n    root %s;\n", listen, root)
	if cfg.TLS {
		fmt.Fprintf(&b, "    ssl_certificate %s/server-cert.pem;\n    ssl_certificate_key %s/server-key.pem;\n", tlsDir, tlsDir)
		if cfg.ClientCert {
			fmt.Fprintf(&b, "    ssl_client_certificate %s/ca-cert.pem;\n    ssl_verify_client on;\n", tlsDir)
		}
	}
	if cfg.NoRanges {
		b.WriteString("    max_ranges 0;\n")
	}
	if cfg.BasicAuth != "" {
		fmt.Fprintf(&b, "    auth_basic \"test\";\n    auth_basic_user_file %s/htpasswd;\n", dir)
	}
	if cfg.Bearer != "" {
		fmt.Fprintf(&b, "    if ($http_authorization != \"Bearer %s\") { return 401; }\n", cfg.Bearer)
	}
	if cfg.Header != "" {
		name, value, _ := strings.Cut(cfg.Header, ":")
		variable := "$http_" + strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
		fmt.Fprintf(&b, "    if (%s != \"%s\") { return 403; }\n", variable, strings.TrimSpace(value))
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
