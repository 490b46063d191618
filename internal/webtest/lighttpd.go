package webtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Lighttpd serves root over plain HTTP with lighttpd, a second server
// whose answers to ranges and conditional requests differ in details from
// nginx's (Debian's lighttpd has TLS only with lighttpd-mod-openssl).
func Lighttpd(t testing.TB, root string) *Server {
	t.Helper()
	bin := Need(t, "lighttpd", "lighttpd")
	dir := t.TempDir()
	return launch(t, "http", func(port int) []string {
		conf := filepath.Join(dir, "lighttpd.conf")
		text := fmt.Sprintf(`server.document-root = %q
server.bind = "127.0.0.1"
server.port = %d
server.errorlog = %q
server.max-keep-alive-requests = 100000
mimetype.assign = ("" => "application/octet-stream")
`, root, port, filepath.Join(dir, "error.log"))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{bin, "-D", "-f", conf}
	})
}
