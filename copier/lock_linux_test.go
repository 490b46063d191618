package copier

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// Locks against the real peers: qemu-nbd, qemu-io and qemu-img (QEMU's
// image locks), flock(2) and fcntl locks. Each refusal is checked to leave
// DST byte-identical with the same size and mtime.

// lockImage writes n random bytes to a new file in dir.
func lockImage(t *testing.T, dir, name string, n int, seed uint64) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// An mtime in the past, so that any write shows in it.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// untouched fails unless path holds exactly want and kept mtime.
func untouched(t *testing.T, path string, want []byte, mtime time.Time) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (%d bytes, want %d)", path, len(got), len(want))
	}
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(mtime) {
		t.Errorf("%s: mtime %v, want %v (%v)", path, fi.ModTime(), mtime, err)
	}
}

func mtimeOf(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func wantRefused(t *testing.T, err error, parts ...string) {
	t.Helper()
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("err = %v (%T), want a *RefusedError", err, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q lacks %q", err, p)
		}
	}
}

func lockOpen(t *testing.T, path string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPrepareRefusesDstQemuNbd: a DST that qemu-nbd serves, writable or
// read-only, is refused by Prepare with exit-2 semantics, naming qemu-nbd
// and its pid, with Force too; DST is untouched.
func TestPrepareRefusesDstQemuNbd(t *testing.T) {
	for _, ro := range []bool{false, true} {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("readonly=%v/force=%v", ro, force), func(t *testing.T) {
				dir := t.TempDir()
				src, _ := lockImage(t, dir, "src", 64<<10, 3)
				dst, data := lockImage(t, dir, "dst", 1<<20, 4)
				mtime := mtimeOf(t, dst)
				var args []string
				if ro {
					args = []string{"-r"}
				}
				pid, _ := qemutest.NBD(t, dst, args...)
				_, err := Copy(context.Background(), Options{Src: src, Dst: dst, Force: force, Engine: EnginePool})
				wantRefused(t, err, fmt.Sprintf("qemu-nbd (pid %d) holds QEMU image locks", pid), forceNeverLocks)
				untouched(t, dst, data, mtime)
			})
		}
	}
}

// TestRunRefusesDstLockedAfterPrepare: qemu-nbd opens DST between Prepare
// and Run; Run refuses before it truncates or writes anything (DST is
// longer than SRC, so a truncate would show).
func TestRunRefusesDstLockedAfterPrepare(t *testing.T) {
	dir := t.TempDir()
	src, _ := lockImage(t, dir, "src", 64<<10, 5)
	dst, data := lockImage(t, dir, "dst", 1<<20, 6)
	mtime := mtimeOf(t, dst)
	p, err := Prepare(Options{Src: src, Dst: dst, Engine: EnginePool})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := qemutest.NBD(t, dst)
	_, err = p.Run(context.Background())
	wantRefused(t, err, fmt.Sprintf("qemu-nbd (pid %d) holds QEMU image locks", pid))
	untouched(t, dst, data, mtime)
}

// TestSrcQemuNbd: a SRC that qemu-nbd serves read-only copies; one it
// serves writable is refused, naming it, unless Force.
func TestSrcQemuNbd(t *testing.T) {
	dir := t.TempDir()
	src, data := lockImage(t, dir, "src", 1<<20+511, 7)
	dst := filepath.Join(dir, "dst")
	qemutest.NBD(t, src, "-r")
	if _, err := Copy(context.Background(), Options{Src: src, Dst: dst, Engine: EnginePool}); err != nil {
		t.Fatalf("SRC served read-only: %v", err)
	}
	lockSameBytes(t, dst, data)

	src2, data2 := lockImage(t, dir, "src2", 1<<20+511, 8)
	pid, _ := qemutest.NBD(t, src2)
	dst2 := filepath.Join(dir, "dst2")
	_, err := Copy(context.Background(), Options{Src: src2, Dst: dst2, Engine: EnginePool})
	wantRefused(t, err, fmt.Sprintf("SRC is open for writing by qemu-nbd (pid %d): a copy would not be consistent; Options.Force copies anyway", pid))
	if _, err := os.Lstat(dst2); err == nil {
		t.Errorf("refused copy created %s", dst2)
	}
	p, err := Prepare(Options{Src: src2, Dst: dst2, Engine: EnginePool, Force: true})
	if err != nil {
		t.Fatalf("Force: %v", err)
	}
	if !strings.Contains(p.Forced, fmt.Sprintf("SRC is open for writing by qemu-nbd (pid %d)", pid)) {
		t.Errorf("Forced = %q", p.Forced)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatalf("Force: %v", err)
	}
	lockSameBytes(t, dst2, data2)
}

func lockSameBytes(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes differ from SRC's %d", path, len(got), len(want))
	}
}

// TestDstLocked: flock(2) LOCK_SH and LOCK_EX and OFD locks taken through
// another descriptor refuse DST, with Force too, naming this process; an
// fcntl write lock held by another process does too, naming it; an fcntl
// read lock away from QEMU's bytes does not.
func TestDstLocked(t *testing.T) {
	cases := []struct {
		name string
		lock func(t *testing.T, path string) int // takes the lock, returns its holder
		want string                              // "": the copy goes ahead
	}{
		{"flock-sh", flockIn(unix.LOCK_SH), guard.Flock},
		{"flock-ex", flockIn(unix.LOCK_EX), guard.Flock},
		{"ofd-write-eof", ofdIn(unix.F_WRLCK, 0, 0), guard.WriteLock},   // length 0: to the end
		{"ofd-read-qemu", ofdIn(unix.F_RDLCK, 203, 1), guard.QEMULocks}, // QEMU's "nobody else may resize"
		{"posix-write", posixIn(unix.F_WRLCK), guard.WriteLock},
		{"posix-read", posixIn(unix.F_RDLCK), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, sdata := lockImage(t, dir, "src", 8192+1, 9)
			dst, data := lockImage(t, dir, "dst", 1<<20, 10)
			mtime := mtimeOf(t, dst)
			holder := c.lock(t, dst)
			_, err := Copy(context.Background(), Options{Src: src, Dst: dst, Force: true, Engine: EnginePool})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				lockSameBytes(t, dst, sdata)
				return
			}
			wantRefused(t, err, fmt.Sprintf("(pid %d) holds %s", holder, c.want))
			untouched(t, dst, data, mtime)
		})
	}
}

func flockIn(how int) func(t *testing.T, path string) int {
	return func(t *testing.T, path string) int {
		if err := unix.Flock(int(lockOpen(t, path, 0).Fd()), how); err != nil {
			t.Fatal(err)
		}
		return os.Getpid()
	}
}

// ofdIn takes an OFD lock on n bytes at off through a descriptor of its
// own, as QEMU does.
func ofdIn(typ int16, off, n int64) func(t *testing.T, path string) int {
	return func(t *testing.T, path string) int {
		lk := unix.Flock_t{Type: typ, Start: off, Len: n}
		if err := unix.FcntlFlock(lockOpen(t, path, os.O_RDWR).Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			t.Fatal(err)
		}
		return os.Getpid()
	}
}

// posixIn takes an fcntl (POSIX) lock on bytes 4096-4105 in a helper
// process: a POSIX lock of this process would vanish as soon as Prepare
// closes any descriptor of the file.
func posixIn(typ int16) func(t *testing.T, path string) int {
	return func(t *testing.T, path string) int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("RINGCP_POSIX_LOCK=%d:%s", typ, path))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close() // the helper exits at EOF
			cmd.Wait()
		})
		line, err := bufio.NewReader(out).ReadString('\n')
		if line != "locked\n" {
			t.Fatalf("lock helper: %q %v", line, err)
		}
		return cmd.Process.Pid
	}
}

// TestLockHelperProcess is posixIn's helper process, not a test: it takes
// the lock RINGCP_POSIX_LOCK names, says "locked", and holds it until its
// stdin ends.
func TestLockHelperProcess(t *testing.T) {
	spec, ok := os.LookupEnv("RINGCP_POSIX_LOCK")
	if !ok {
		return
	}
	typ, path, _ := strings.Cut(spec, ":")
	n, _ := strconv.Atoi(typ)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		err = posixLock(f, int16(n), 4096, 10)
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

func posixLock(f *os.File, typ int16, off, n int64) error {
	lk := unix.Flock_t{Type: typ, Start: off, Len: n}
	return unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
}

// TestTwoPlansOneDst: while one plan holds DST (Run's locks, taken by
// open), a second Prepare onto it is refused naming this process, and so
// is a Run prepared before; once the first drops its locks, DST is free.
// A new DST needs no locks: it has no name until it is complete.
func TestTwoPlansOneDst(t *testing.T) {
	for _, existing := range []bool{true, false} {
		t.Run(fmt.Sprintf("existing=%v", existing), func(t *testing.T) {
			dir := t.TempDir()
			src, _ := lockImage(t, dir, "src", 64<<10, 11)
			dst := filepath.Join(dir, "dst")
			if existing {
				lockImage(t, dir, "dst", 1<<20, 12)
			}
			opts := Options{Src: src, Dst: dst, Engine: EnginePool}
			first, err := Prepare(opts)
			if err != nil {
				t.Fatal(err)
			}
			before, err := Prepare(opts)
			if err != nil {
				t.Fatal(err)
			}
			var rep Report
			a, err := first.acquire(context.Background(), &rep, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !existing {
				if _, err := os.Stat(dst); !os.IsNotExist(err) {
					t.Errorf("a new DST is visible while its copy runs: %v", err)
				}
				a.release()
				return
			}
			_, err = Prepare(opts)
			wantRefused(t, err, fmt.Sprintf("(pid %d) holds QEMU image locks", os.Getpid()))
			_, err = before.Run(context.Background())
			wantRefused(t, err, fmt.Sprintf("(pid %d) holds", os.Getpid()))
			qemutest.Refuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 1", dst)
			f := lockOpen(t, dst, 0)
			if c, err := guard.CheckDst(f); c == nil || c.What != guard.QEMULocks || err != nil {
				t.Errorf("probe of a held DST: %v, %v", c, err)
			}
			a.release()
			if c, err := guard.CheckDst(f); c != nil || err != nil {
				t.Errorf("DST still locked after release: %+v %v", c, err)
			}
		})
	}
}

// TestLocksEndWithCopy: after Copy, neither end keeps a lock (QEMU can
// write both); SRC and DST one file with distinct ranges copies (DST's
// locks cover SRC).
func TestLocksEndWithCopy(t *testing.T) {
	qemutest.Need(t, "qemu-io")
	dir := t.TempDir()
	src, data := lockImage(t, dir, "src", 3<<20, 13)
	dst := filepath.Join(dir, "dst")
	if _, err := Copy(context.Background(), Options{Src: src, Dst: dst, Engine: EnginePool}); err != nil {
		t.Fatal(err)
	}
	lockSameBytes(t, dst, data)
	_, err := Copy(context.Background(), Options{Src: dst, Dst: dst, Length: 1 << 20, LengthSet: true, DstOffset: 2 << 20, Engine: EnginePool})
	if err != nil {
		t.Fatalf("same file, distinct ranges: %v", err)
	}
	copy(data[2<<20:], data[:1<<20])
	lockSameBytes(t, dst, data)
	qemutest.Works(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemutest.Works(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
}

// TestLockBlockDevice: a loop device that qemu-nbd serves is refused as DST
// (QEMU locks the device node) and as SRC when served writable; ringcp's
// own locks on the node keep QEMU out.
func TestLockBlockDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	dev, backing := blocktest.Device(t, 4<<20)
	dir := t.TempDir()
	src, _ := lockImage(t, dir, "src", 64<<10, 14)
	before, err := os.ReadFile(backing)
	if err != nil {
		t.Fatal(err)
	}
	pid, stop := qemutest.NBD(t, dev)
	_, err = Copy(context.Background(), Options{Src: src, Dst: dev, Force: true, Engine: EnginePool})
	wantRefused(t, err, fmt.Sprintf("qemu-nbd (pid %d) holds QEMU image locks", pid))
	_, err = Copy(context.Background(), Options{Src: dev, Dst: filepath.Join(dir, "out"), Engine: EnginePool})
	wantRefused(t, err, fmt.Sprintf("SRC is open for writing by qemu-nbd (pid %d)", pid))
	stop()
	if after, _ := os.ReadFile(backing); !bytes.Equal(before, after) {
		t.Errorf("the loop device's backing file changed")
	}

	p, err := Prepare(Options{Src: src, Dst: dev, Engine: EnginePool})
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	a, err := p.acquire(context.Background(), &rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	qemutest.Refuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 1", dev)
	a.release()
}
