package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/internal/delayproxy"
)

// The web workloads (issue 23) import an image from a URL, as platforms
// do: the run's source, its .xz and its .zst, served by nginx-light
// (started for the workload, stopped after), on loopback and through a
// proxy that adds a 20 ms round trip (internal/delayproxy), into a new
// file and onto a loop device. Peers: curl -o, wget, aria2c -x8 -s8,
// qemu-img convert over its curl block driver (qemu-block-extra),
// nbdkit's curl plugin with nbdcopy, and for the compressed images the
// pipelines platforms run, curl | xz -dc | dd and curl | zstd -dc | dd.
// http-qcow2 imports the sparse source converted to qcow2 from its URL:
// ringcp against qemu-img convert reading the same URL.

// webCase is one web workload.
type webCase struct {
	pack  string // "", "xz" or "zst"
	dev   bool   // DST is a loop device
	delay time.Duration
	qcow2 bool
}

var webCases = func() []webCase {
	var cs []webCase
	for _, pack := range []string{"", "xz", "zst"} {
		for _, dev := range []bool{false, true} {
			for _, d := range []time.Duration{0, 20 * time.Millisecond} {
				cs = append(cs, webCase{pack: pack, dev: dev, delay: d})
			}
		}
	}
	return append(cs, webCase{qcow2: true}, webCase{qcow2: true, delay: 20 * time.Millisecond})
}()

func init() {
	for _, c := range webCases {
		workloads = append(workloads, c.workload())
	}
	tools = append(tools, webTools...)
	for prog, pkg := range map[string]string{"nginx": "nginx-light", "curl": "curl", "wget": "wget", "aria2c": "aria2",
		"xz": "xz-utils", "zstd": "zstd", "sh": "dash", "bash": "bash"} {
		debianPkg[prog] = pkg
	}
	versionArg["curl"], versionArg["wget"], versionArg["aria2c"] = "--version", "--version", "--version"
}

func (c webCase) name() string {
	n := "http-raw"
	switch {
	case c.qcow2:
		n = "http-qcow2"
	case c.pack != "":
		n = "http-" + c.pack
	}
	if !c.qcow2 {
		n += map[bool]string{false: "-file", true: "-dev"}[c.dev]
	}
	if c.delay > 0 {
		n += fmt.Sprintf("-%dms", c.delay.Milliseconds())
	}
	return n
}

func (c webCase) workload() Workload {
	what := map[string]string{"": "the source", "xz": "the source as .xz (xz -1 -T0)", "zst": "the source as .zst (zstd -3 -T0)"}[c.pack]
	to := map[bool]string{false: "a new file", true: "a loop device (direct-io on)"}[c.dev]
	w := Workload{Name: c.name(), Setup: c.setup, Optional: true}
	w.Desc = fmt.Sprintf("%s over HTTP from nginx-light to %s", what, to)
	switch {
	case c.qcow2:
		w.Desc = "the sparse image as qcow2 over HTTP from nginx-light to a new raw file, read by each tool from the URL"
		w.Source, w.Tools = makeSparseSource, []string{"ringcp", "qemu-img-http"}
		w.Space = func(cfg *Config) int64 { return sparseSpace(cfg) + cfg.SparseSize/8 }
	case c.pack != "":
		w.Tools = []string{"ringcp", map[string]string{"xz": "curl-xz-dd", "zst": "curl-zstd-dd"}[c.pack]}
		w.Space = func(cfg *Config) int64 { return cfg.Size }
	default:
		w.Tools = []string{"ringcp", "curl", "wget", "qemu-img-http", "nbdcopy-curl"}
		if !c.dev {
			w.Tools = append(w.Tools, "aria2c") // it renames and preallocates: a file only
		}
	}
	if c.delay > 0 {
		w.Desc += fmt.Sprintf(", through a proxy adding a %v round trip", c.delay)
	}
	return w
}

// setup serves the workload's file and makes its DST.
func (c webCase) setup(e *Env, src *Source) (*Pair, error) {
	if err := needPrograms("nginx"); err != nil {
		return nil, err
	}
	name, err := c.publish(e, src)
	if err != nil {
		return nil, err
	}
	srv, err := startNginx(e, filepath.Join(e.Dir, "web"))
	if err != nil {
		return nil, err
	}
	stop := srv.stop
	addr := srv.addr
	if c.delay > 0 {
		p, err := delayproxy.Start(addr, c.delay, 0)
		if err != nil {
			stop()
			return nil, err
		}
		e.onClose(func() { p.Close() })
		addr = p.Addr()
	}
	url := "http://" + addr + "/" + name
	p, err := c.dst(e, src)
	if err != nil {
		stop()
		return nil, err
	}
	p.Src, p.SrcImage, p.SrcFormat = url, url, "raw"
	if c.pack == "" && !c.qcow2 {
		if _, err := lookPath("nbdkit"); err == nil {
			nbd, err := startServer(e, "unix", "", "nbdkit", "-r", "curl", "url="+url)
			if err != nil {
				p.Close()
				stop()
				return nil, err
			}
			p.ViaNBD = nbd.uri
			stop = func() { nbd.stop(); srv.stop() }
		}
	}
	if c.pack == "zst" && c.dev {
		// zstd does not say its size, and a device's bytes past SRC's
		// end must not change: ringcp wants it announced (a platform
		// knows the image's size from its catalogue).
		p.RingcpFlags = []string{"--size", fmt.Sprint(src.Size)}
	}
	if c.qcow2 {
		p.SrcFormat = "qcow2"
		p.Size = (src.Size + 511) / 512 * 512 // QEMU's sectors: zeros past the image
	}
	close := p.Close
	p.Close = func() { close(); stop() }
	return p, nil
}

// dst is a new file, or a loop device (newDeviceDst).
func (c webCase) dst(e *Env, src *Source) (*Pair, error) {
	if !c.dev {
		return setupFile(e, src)
	}
	return newDeviceDst(e, src, "dst-web.img")
}

// publish puts the workload's file in the served folder (made once per
// run and kept for the other web workloads) and returns its name there.
func (c webCase) publish(e *Env, src *Source) (string, error) {
	dir := filepath.Join(e.Dir, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Base(src.Path)
	raw := filepath.Join(dir, base)
	if _, err := os.Lstat(raw); err != nil {
		if err := os.Symlink(src.Path, raw); err != nil {
			return "", err
		}
	}
	var name, shell string
	switch {
	case c.qcow2:
		name, shell = base+".qcow2", `qemu-img convert -f raw -O qcow2 "$1" "$2"`
	case c.pack == "xz":
		name, shell = base+".xz", `xz -1 -T0 -c "$1" > "$2"`
	case c.pack == "zst":
		name, shell = base+".zst", `zstd -q -3 -T0 -c "$1" > "$2"`
	default:
		return base, nil
	}
	out := filepath.Join(dir, name)
	if _, err := os.Stat(out); err == nil {
		return name, nil
	}
	e.logf("making %s", out)
	tmp := out + ".tmp"
	if b, err := exec.Command("sh", "-c", shell, "sh", src.Path, tmp).CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: %v: %s", shell, err, firstLines(b, 2))
	}
	return name, os.Rename(tmp, out)
}

// webServer is an nginx the bench started.
type webServer struct {
	addr string
	cmd  *exec.Cmd
}

// startNginx serves root on a loopback port, one nginx process in the
// foreground in its own process group, every file of its own in a folder
// of the run.
func startNginx(e *Env, root string) (*webServer, error) {
	bin, err := lookPath("nginx")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(e.Dir, "nginx-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, root, addr)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &webServer{addr: addr, cmd: cmd}
	e.onClose(s.stop)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return nil, fmt.Errorf("nginx did not listen on %s: %s", addr, firstLines(log, 2))
		}
	}
}

// stop kills nginx's process group; a second call does nothing.
func (s *webServer) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

// nginxConf: no master (one kill stops it), no access log (its writes
// would land on the disk being measured), sendfile, long keep-alive.
func nginxConf(dir, root, addr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "daemon off;\nmaster_process off;\npid %s/nginx.pid;\nerror_log %s/error.log;\n", dir, dir)
	b.WriteString("events { worker_connections 1024; }\nhttp {\n  access_log off;\n")
	for _, tmp := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s/%s;\n", tmp, dir, tmp)
	}
	b.WriteString("  default_type application/octet-stream;\n  sendfile on;\n")
	b.WriteString("  keepalive_requests 100000;\n  keepalive_timeout 60s;\n")
	fmt.Fprintf(&b, "  server {\n    listen %s;\n    root %s;\n  }\n}\n", addr, root)
	return b.String()
}
