package syncproto

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/sshtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// overSSH is an sshd of the test's own and the remote ringcp it starts.
type overSSH struct {
	srv *sshtest.Server
	ssh SSH
	pid string // where the remote ringcp writes its pid
}

// startSSH starts sshd, and a wrapper that runs this test binary as the
// remote `ringcp sync --serve` (writing its pid first).
func startSSH(t *testing.T) *overSSH {
	t.Helper()
	srv := sshtest.Start(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := &overSSH{srv: srv, pid: filepath.Join(srv.Dir, "serve.pid")}
	wrapper := filepath.Join(srv.Dir, "remote ringcp") // a space: the quoting must hold
	script := fmt.Sprintf("#!/bin/sh\necho $$ > '%s'\n%s=1 exec '%s' \"$@\"\n", o.pid, serveEnv, self)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o.ssh = SSH{Options: srv.Options, RemoteRingcp: wrapper}
	return o
}

// dial connects to path on the test's sshd.
func (o *overSSH) dial(t *testing.T, ctx context.Context, path string) *Conn {
	t.Helper()
	r, err := ParseRemote(o.srv.URL(path))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, r, o.ssh)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (o *overSSH) push(t *testing.T, ctx context.Context, srcPath, dstPath string, opt Options) (Result, error) {
	t.Helper()
	src, err := blocksync.OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return Push(ctx, o.dial(t, ctx, dstPath), src, dstPath, opt)
}

func (o *overSSH) pull(t *testing.T, ctx context.Context, srcPath, dstPath string, opt Options) (Result, error) {
	t.Helper()
	dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	return Pull(ctx, o.dial(t, ctx, srcPath), srcPath, dst, opt)
}

// Over a real ssh session to this host: pushes and pulls of synctest
// pairs end byte for byte equal, with the model's counts. (Each session
// costs an ssh login, seconds on a loaded machine: the in-process tests
// run every pair both ways.)
func TestSSH(t *testing.T) {
	o := startSSH(t)
	dirs := map[string][]string{"whole-granules": {"push", "pull"}, "data-became-zeros": {"push"},
		"grown": {"pull"}, "shrunk": {"push"}, "holes-became-data": {"pull"}, "first-and-last-byte/4097": {"push"},
		"from-empty/1": {"pull"}, "to-empty/511": {"push"}}
	const g = 64 << 10
	for _, c := range synctest.Cases(g) {
		for _, dir := range dirs[c.Name] {
			t.Run(c.Name+"/"+dir, func(t *testing.T) {
				d := t.TempDir()
				srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
				synctest.WriteFile(t, srcPath, c.Src)
				synctest.WriteDst(t, dstPath, c)
				var r Result
				var err error
				if dir == "push" {
					r, err = o.push(t, context.Background(), srcPath, dstPath, Options{Granule: g})
				} else {
					r, err = o.pull(t, context.Background(), srcPath, dstPath, Options{Granule: g})
				}
				if err != nil {
					t.Fatal(err)
				}
				synctest.Same(t, dstPath, c.Src)
				checkResult(t, r, c, g)
				if h, _ := os.Hostname(); r.Peer != h {
					t.Errorf("peer %q, want %q", r.Peer, h)
				}
			})
		}
	}
}

// A loop device on the other host: it is sent the differing granules
// and nothing else, counted by the device itself.
func TestSSHLoopDevice(t *testing.T) {
	o := startSSH(t)
	const g, size = 64 << 10, 8 << 20
	dev, _ := blocktest.Device(t, size)
	old := synctest.Random(21, size)
	src := append([]byte{}, old...)
	copy(src[g+5:], "changed")
	copy(src[5*g:], synctest.Random(22, 3*g))
	clear(src[100*g : 102*g])
	src[size-1]++
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(old, 0); err != nil || f.Sync() != nil {
		t.Fatal(err)
	}
	f.Close()
	srcPath := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, srcPath, src)
	before := iocount.Device(t, dev)
	r, err := o.push(t, context.Background(), srcPath, dev, Options{Granule: g})
	if err != nil {
		t.Fatal(err)
	}
	got := iocount.Device(t, dev).Since(before)
	synctest.Same(t, dev, src)
	if r.Written != 5*g || r.Zeroed != 2*g {
		t.Errorf("written %d zeroed %d, want %d and %d", r.Written, r.Zeroed, 5*g, 2*g)
	}
	iocount.Near(t, "bytes written to the device", got.WriteBytes+got.DiscardBytes, 7*g, 1.0, 0)
	// Over the network went the changed granules, not the disk.
	if r.Sent > 7*g+64<<10 {
		t.Errorf("sent %d bytes for %d changed", r.Sent, 7*g)
	}
}

// What ssh itself fails at is named: no ringcp on the other host, no way
// to log in (BatchMode: no prompt, no hang).
func TestSSHFailures(t *testing.T) {
	o := startSSH(t)
	srcPath := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, srcPath, synctest.Random(1, 4096))
	t.Run("no remote ringcp", func(t *testing.T) {
		bad := *o
		bad.ssh.RemoteRingcp = "/nonexistent/ringcp"
		_, err := bad.push(t, context.Background(), srcPath, "/tmp/x", Options{})
		var se *SSHError
		if !errors.As(err, &se) || se.Status != 127 || !strings.Contains(err.Error(), "is ringcp installed") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("key not authorized", func(t *testing.T) {
		keys := filepath.Join(o.srv.Dir, "authorized_keys")
		authorized := mustRead(t, keys)
		if err := os.WriteFile(keys, nil, 0o600); err != nil { // nobody may log in now
			t.Fatal(err)
		}
		defer os.WriteFile(keys, authorized, 0o600)
		start := time.Now()
		_, err := o.push(t, context.Background(), srcPath, "/tmp/x", Options{})
		var se *SSHError
		if !errors.As(err, &se) || se.Status != 255 || time.Since(start) > 20*time.Second {
			t.Fatalf("got %v after %v", err, time.Since(start))
		}
	})
	t.Run("refused there", func(t *testing.T) {
		dev, _ := blocktest.Device(t, 64<<20)
		blocktest.Mkfs(t, dev, "ext4")
		blocktest.Mount(t, dev, "ext4", 0)
		_, err := o.push(t, context.Background(), srcPath, dev, Options{})
		var re *blocksync.RefusedError
		var rem *RemoteError
		if !errors.As(err, &re) || re.Kind != blocksync.KindMounted || !errors.As(err, &rem) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("onto itself", func(t *testing.T) {
		_, err := o.push(t, context.Background(), srcPath, srcPath, Options{})
		var re *blocksync.RefusedError
		if !errors.As(err, &re) || (re.Kind != blocksync.KindLocked && re.Kind != blocksync.KindOverlap) {
			t.Fatalf("got %v", err)
		}
		synctest.Same(t, srcPath, synctest.Random(1, 4096))
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Stopping the client (its SIGINT handler cancels the context) closes
// the session: the remote ringcp reads EOF and exits at once, names no
// new DST and leaves no temporary file.
func TestSSHInterrupt(t *testing.T) {
	o := startSSH(t)
	const size = 64 << 20
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
	synctest.WriteFile(t, srcPath, synctest.Random(31, size))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var p blocksync.Progress
	go func() {
		for p.Changed.Load() < 8<<20 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	r, err := o.push(t, ctx, srcPath, dstPath, Options{Create: true, Progress: &p})
	if !errors.Is(err, context.Canceled) || r.Written >= size {
		t.Fatalf("got %+v, %v", r, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(mustRead(t, o.pid))))
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the remote ringcp (pid %d) still runs 10s after the client stopped", pid)
		}
	}
	if _, err := os.Stat(dstPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stopped sync named its new DST: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(d, ".dst.*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
