package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/nbd"
)

// The NBD workloads copy between a file and an NBD export, both ways, the
// way VMs' disks move between hosts: ringcp against nbdcopy (libnbd's
// reference client) and qemu-img convert, over a Unix socket and over TCP
// loopback, and behind nbdkit's delay filter (1 ms and 10 ms on every
// request) to stand in for a network. The export a tool writes is
// nbdkit's memory plugin, so that the client's path is what is measured;
// the export a tool reads is nbdkit's file plugin over the run's source
// file, read from disk as the other workloads read it. qcow2-import
// imports a sparse qcow2 image served by qemu-nbd, against qemu-img
// convert reading the image itself.

// nbdCase is one file<->export workload.
type nbdCase struct {
	write bool   // file to export; else export to file
	tr    string // "unix" or "tcp"
	delay string // nbdkit delay filter on every request, "" for none
	tls   bool   // nbds://: the server requires TLS (X.509)
}

var nbdCases = []nbdCase{
	{write: true, tr: "unix"}, {tr: "unix"},
	{write: true, tr: "tcp"}, {tr: "tcp"},
	{write: true, tr: "tcp", delay: "1ms"}, {tr: "tcp", delay: "1ms"},
	{write: true, tr: "tcp", delay: "10ms"}, {tr: "tcp", delay: "10ms"},
	{write: true, tr: "tcp", tls: true}, {tr: "tcp", tls: true},
}

// nbdTools are the clients compared on NBD workloads; over TLS, the ones
// that take an nbds URI (qemu-img needs its TLS set up as QOM objects).
var (
	nbdTools    = []string{"ringcp", "nbdcopy", "qemu-img"}
	nbdTLSTools = []string{"ringcp", "nbdcopy"}
)

func init() {
	for _, c := range nbdCases {
		workloads = append(workloads, c.workload())
	}
	workloads = append(workloads, Workload{
		Name:   "qcow2-import",
		Desc:   "sparse qcow2 image (the sparse workload's, converted) to a new raw file: through qemu-nbd -r -f qcow2 on a Unix socket, or read by qemu-img convert itself",
		Source: makeSparseSource,
		Space:  func(cfg *Config) int64 { return sparseSpace(cfg) + cfg.SparseSize/8 },
		Setup:  setupQcow2Import,
		Tools:  nbdTools,
	})
	debianPkg["qemu-nbd"], debianPkg["nbdkit"] = "qemu-utils", "nbdkit"
}

func (c nbdCase) name() string {
	dir := "from-nbd"
	if c.write {
		dir = "to-nbd"
	}
	n := dir + "-" + c.tr
	if c.delay != "" {
		n += "-" + c.delay
	}
	if c.tls {
		n += "-tls"
	}
	return n
}

func (c nbdCase) workload() Workload {
	desc := "NBD export (nbdkit file over the source) to a new file"
	if c.write {
		desc = "file to an NBD export (nbdkit memory, zeroed before each run)"
	}
	desc += " over " + map[string]string{"unix": "a Unix socket", "tcp": "TCP loopback"}[c.tr]
	if c.delay != "" {
		desc += ", " + c.delay + " added to every request (nbdkit delay filter)"
	}
	tools := nbdTools
	if c.tls {
		desc += ", over TLS (nbds://, X.509 credentials made for the run)"
		tools = nbdTLSTools
	}
	return Workload{Name: c.name(), Desc: desc, Setup: c.setup, Tools: tools}
}

// serverArgs are nbdkit's options for the case (TLS), its filters, the
// plugin with its arguments, and the filters' parameters; and the folder
// of TLS credentials, "" for none.
func (c nbdCase) serverArgs(e *Env, plugin ...string) ([]string, string, error) {
	filters, params := c.delayArgs()
	var opts []string
	dir := ""
	if c.tls {
		dir = filepath.Join(e.Dir, "tls")
		if _, err := os.Stat(dir); err != nil {
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, "", err
			}
			if err := nbdtest.WriteTLSDir(dir); err != nil {
				return nil, "", err
			}
		}
		opts = []string{"--tls=require", "--tls-certificates=" + dir}
	}
	return append(append(append(opts, filters...), plugin...), params...), dir, nil
}

// delayArgs puts nbdkit's delay filter on every request that moves data
// or asks for extents.
func (c nbdCase) delayArgs() (filters, params []string) {
	if c.delay == "" {
		return nil, nil
	}
	for _, k := range []string{"read", "write", "zero", "trim", "extents", "cache"} {
		params = append(params, "delay-"+k+"="+c.delay)
	}
	return []string{"--filter=delay"}, params
}

func (c nbdCase) setup(e *Env, src *Source) (*Pair, error) {
	if err := needPrograms("nbdkit"); err != nil {
		return nil, err
	}
	if !c.write {
		args, tlsDir, err := c.serverArgs(e, "file", src.Path)
		if err != nil {
			return nil, err
		}
		srv, err := startSecureServer(e, c.tr, "", tlsDir, "nbdkit", append([]string{"-r"}, args...)...)
		if err != nil {
			return nil, err
		}
		p, err := setupFile(e, src)
		if err != nil {
			srv.stop()
			return nil, err
		}
		p.Src = srv.uri
		close := p.Close
		p.Close = func() { close(); srv.stop() }
		return p, nil
	}
	// qemu-img rounds its source up to 512 bytes and writes all of it:
	// the export is that long, and the check reads the first Size bytes.
	size := (src.Size + 511) / 512 * 512
	args, tlsDir, err := c.serverArgs(e, "memory", fmt.Sprint(size))
	if err != nil {
		return nil, err
	}
	srv, err := startSecureServer(e, c.tr, "", tlsDir, "nbdkit", args...)
	if err != nil {
		return nil, err
	}
	x := &exportDst{uri: srv.uri, size: size}
	return &Pair{
		Src: src.Path, Dst: srv.uri, Size: src.Size, Content: src.Content,
		DstDev: true, // qemu-img convert -n; no truncate
		Reset:  x.zero,
		Sync:   func() error { return nil }, // every tool flushes itself (nbdcopy --flush)
		Check:  x.check,
		Close:  srv.stop,
	}, nil
}

// setupQcow2Import converts the sparse source to qcow2 and serves it
// read-only with qemu-nbd; qemu-img reads the qcow2 itself.
func setupQcow2Import(e *Env, src *Source) (*Pair, error) {
	if err := needPrograms("qemu-img", "qemu-nbd"); err != nil {
		return nil, err
	}
	img := filepath.Join(e.Dir, "src.qcow2")
	e.logf("converting %s to qcow2", src.Path)
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", src.Path, img).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("qemu-img convert to qcow2: %v: %s", err, firstLines(out, 2))
	}
	srv, err := startServer(e, "unix", "disk", "qemu-nbd", "--persistent", "--shared=8", "-r", "-f", "qcow2", "-x", "disk", img)
	if err != nil {
		os.Remove(img)
		return nil, err
	}
	p, err := setupFile(e, src)
	if err != nil {
		srv.stop()
		return nil, err
	}
	// QEMU sizes images in 512-byte sectors: the import is that long, its
	// padding zeros (sparseContent reads zeros past the image).
	p.Size = (src.Size + 511) / 512 * 512
	p.Src, p.SrcImage, p.SrcFormat = srv.uri, img, "qcow2"
	close := p.Close
	p.Close = func() { close(); srv.stop(); os.Remove(img) }
	return p, nil
}

// needPrograms fails with errSkip unless the programs are installed.
func needPrograms(progs ...string) error {
	for _, p := range progs {
		if _, err := lookPath(p); err != nil {
			return fmt.Errorf("%w: %s not installed (apt-get install %s)", errSkip, p, debianPkg[p])
		}
	}
	return nil
}

// server is an NBD server the bench started: it gets a listening socket
// the bench made, by socket activation (LISTEN_FDS=1, the socket as fd 3;
// qemu-nbd and nbdkit both take it), and runs in its own process group.
type server struct {
	uri string
	cmd *exec.Cmd
}

func startServer(e *Env, tr, export, prog string, args ...string) (*server, error) {
	return startSecureServer(e, tr, export, "", prog, args...)
}

// startSecureServer is startServer for a server that requires TLS with
// the credentials in tlsDir (none when ""): its URI is the nbds one.
func startSecureServer(e *Env, tr, export, tlsDir, prog string, args ...string) (*server, error) {
	f, uri, err := listenFor(e, tr, export)
	if err != nil {
		return nil, err
	}
	if tlsDir != "" {
		uri = nbdtest.Secure(uri, tlsDir)
	}
	defer f.Close() // the server holds its own copy
	if prog == "nbdkit" {
		args = append([]string{"-f"}, args...) // in the foreground, in our process group
	}
	cmd := exec.Command("sh", append([]string{"-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"`, "sh", prog}, args...)...)
	var stderr bytes.Buffer
	cmd.ExtraFiles, cmd.Stderr = []*os.File{f}, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{uri: uri, cmd: cmd}
	e.onClose(s.stop)
	if err := s.ready(); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s %s: %v: %s", prog, strings.Join(args, " "), err, firstLines(stderr.Bytes(), 2))
	}
	return s, nil
}

// ready waits until the server answers a handshake.
func (s *server) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, s.uri, nbd.Options{})
	if err != nil {
		return err
	}
	return c.Close()
}

// stop kills the server's process group; a second call does nothing.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

// listenFor makes the socket a server inherits and the URI naming it: a
// Unix socket in the run's directory, or TCP on loopback at a port the
// kernel chose.
func listenFor(e *Env, tr, export string) (*os.File, string, error) {
	var ln net.Listener
	var err error
	if tr == "unix" {
		sock, ferr := os.CreateTemp(e.Dir, "nbd-*.sock")
		if ferr != nil {
			return nil, "", ferr
		}
		sock.Close()
		os.Remove(sock.Name())
		ln, err = net.Listen("unix", sock.Name())
		if err == nil {
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			e.onClose(func() { os.Remove(sock.Name()) })
		}
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, "", err
	}
	defer ln.Close()
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		return nil, "", err
	}
	if tr == "unix" {
		return f, fmt.Sprintf("nbd+unix:///%s?socket=%s", url.PathEscape(export), ln.Addr().String()), nil
	}
	return f, fmt.Sprintf("nbd://%s/%s", ln.Addr().String(), url.PathEscape(export)), nil
}

// exportDst is an export a tool writes.
type exportDst struct {
	uri  string
	size int64
}

func (x *exportDst) dial() (*nbd.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return nbd.Dial(ctx, x.uri, nbd.Options{Timeout: time.Minute})
}

// zero makes the export read as zeros again before a run, so that a tool
// that writes nothing cannot pass on its predecessor's copy.
func (x *exportDst) zero() error {
	c, err := x.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Zero(0, x.size, 0); err != nil {
		return err
	}
	return c.Flush()
}

// check reads the export back and compares its first size bytes with c.
func (x *exportDst) check(c Content, size int64) error {
	cl, err := x.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	buf, exp := make([]byte, chunkSize), make([]byte, chunkSize)
	for off := int64(0); off < size; off += chunkSize {
		n := min(chunkSize, size-off)
		if _, err := cl.ReadAt(buf[:n], off); err != nil {
			return fmt.Errorf("read %s at %d: %w", x.uri, off, err)
		}
		c.Fill(off, exp[:n])
		if !bytes.Equal(buf[:n], exp[:n]) {
			return fmt.Errorf("%w: %s differs from the source at byte %d", errWrong, x.uri, off+int64(firstDiff(buf[:n], exp[:n])))
		}
	}
	return nil
}

// writeNBDTargets sums the NBD workloads up against their targets:
// ringcp's speed over nbdcopy's (at least 1.2) and its CPU over
// nbdcopy's (at most 1/3), each the median over rounds of the ratio in
// one round; what 1 ms and 10 ms of delay leave of ringcp's speed over
// the same transport without (at least 0.8 at 10 ms), as a ratio of
// medians; and the qcow2 import against qemu-img convert.
func (b *bench) writeNBDTargets(w io.Writer) {
	var rows []string
	for _, c := range nbdCases {
		runs := b.runsOf(c.name())
		if len(runs) == 0 {
			continue
		}
		speed, cpu := againstPeer(runs, "nbdcopy")
		kept := "–"
		if c.delay != "" || c.tls {
			base := b.runsOf(nbdCase{write: c.write, tr: c.tr}.name())
			if at, at0 := toolMBps(runs, baseline), toolMBps(base, baseline); at > 0 && at0 > 0 {
				kept = fmt.Sprintf("%.2f", at/at0)
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", c.name(), fmtRatio(speed), fmtRatio(cpu), kept))
	}
	if runs := b.runsOf("qcow2-import"); len(runs) > 0 {
		speed, cpu := againstPeer(runs, "qemu-img")
		rows = append(rows, fmt.Sprintf("| qcow2-import (against qemu-img convert) | %s | %s | – |", fmtRatio(speed), fmtRatio(cpu)))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "### NBD: ringcp against its targets\n\n"+
		"Speed is the peer's time over ringcp's (target: at least 1.20 against nbdcopy), CPU ringcp's "+
		"over the peer's (target: at most 0.33), each the median over rounds of the ratio within a round; "+
		"\"of 0 ms\" is ringcp's MB/s with the delay (or over TLS) over its MB/s without, in the clear, on the same transport "+
		"(target: at least 0.80 at 10 ms).\n\n"+
		"| workload | speed × peer | CPU / peer | of 0 ms |\n|---|---:|---:|---:|\n%s\n\n", strings.Join(rows, "\n"))
}

// againstPeer is the median over rounds of peer's wall over ringcp's, and
// of ringcp's CPU over peer's, from the rounds where both copied right.
func againstPeer(runs []*Run, peer string) (speed, cpu float64) {
	type pair struct{ ours, theirs *Run }
	rounds := map[int]*pair{}
	for _, r := range runs {
		if r.Err != nil || (r.Tool != baseline && r.Tool != peer) {
			continue
		}
		p := rounds[r.Round]
		if p == nil {
			p = &pair{}
			rounds[r.Round] = p
		}
		if r.Tool == baseline {
			p.ours = r
		} else {
			p.theirs = r
		}
	}
	var speeds, cpus []float64
	for _, p := range rounds {
		if p.ours == nil || p.theirs == nil {
			continue
		}
		speeds = append(speeds, p.theirs.Wall.Seconds()/p.ours.Wall.Seconds())
		if p.theirs.CPU() > 0 {
			cpus = append(cpus, p.ours.CPU().Seconds()/p.theirs.CPU().Seconds())
		}
	}
	return medianOr(speeds), medianOr(cpus)
}

// toolMBps is a tool's median MB/s over its good runs, 0 without any.
func toolMBps(runs []*Run, tool string) float64 {
	for _, s := range summarize(runs) {
		if s.Tool == tool && s.OK > 0 && !s.Wrong {
			return s.MBps()
		}
	}
	return 0
}

// sync makes DST durable after a tool's plan: Pair.Sync where it is set
// (an export), else fdatasync.
func (p *Pair) sync() error {
	if p.Sync != nil {
		return p.Sync()
	}
	return fdatasync(p.Dst)
}

// check checks DST after a copy: Pair.Check where it is set (an export),
// else DST is read back as a file or device.
func (p *Pair) check() error {
	if p.Check != nil {
		return p.Check(p.Content, p.Size)
	}
	return verifyCopy(p.Dst, p.Content, p.Size)
}
