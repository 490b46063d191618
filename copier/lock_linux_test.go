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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// Locks against the real peers: qemu-nbd, qemu-io and qemu-img (QEMU's
// image locks), flock(2) and fcntl locks. Each refusal is checked to leave
// DST byte-identical with the same size and mtime.

func lockNeed(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian: qemu-utils): %v", tool, err)
		}
	}
}

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

// qemuNbd serves image with qemu-nbd (raw, on a socket in a temp dir; args
// such as -r) until stop or the end of the test, and returns its pid.
// --fork returns once the image is open and locked.
func qemuNbd(t *testing.T, image string, args ...string) (pid int, stop func()) {
	t.Helper()
	lockNeed(t, "qemu-nbd")
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	all := append([]string{"--fork", "--pid-file", pidFile, "-k", filepath.Join(dir, "sock"), "-f", "raw"}, args...)
	if out, err := exec.Command("qemu-nbd", append(all, image)...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-nbd %s: %v\n%s", image, err, out)
	}
	b, err := os.ReadFile(pidFile)
	pid, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || err2 != nil {
		t.Fatalf("qemu-nbd pid file: %v %v", err, err2)
	}
	var once sync.Once
	stop = func() { once.Do(func() { stopPid(t, pid) }) }
	t.Cleanup(stop)
	return pid, stop
}

// stopPid ends a process this test started (qemu-nbd has forked away from
// us, so it is polled, not waited for).
func stopPid(t *testing.T, pid int) {
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("pid %d ignored SIGTERM for 5 s; killed", pid)
}

// qemuRefuses runs a QEMU tool that must fail on account of a lock.
func qemuRefuses(t *testing.T, tool string, args ...string) {
	t.Helper()
	lockNeed(t, tool)
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err == nil {
		t.Errorf("%s %s succeeded; want it refused by a lock:\n%s", tool, strings.Join(args, " "), out)
		return
	}
	if !strings.Contains(string(out), "lock") {
		t.Errorf("%s %s failed, but not on a lock: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

func qemuWorks(t *testing.T, tool string, args ...string) {
	t.Helper()
	lockNeed(t, tool)
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
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

// TestLocksAsQEMUSeesThem: with ringcp's SRC locks on a file, QEMU reads it
// (qemu-img info, qemu-io -r) but cannot open it for writing or resize it;
// with ringcp's DST locks, QEMU cannot open it at all. Dropping the locks
// (closing the descriptor) frees both.
func TestLocksAsQEMUSeesThem(t *testing.T) {
	lockNeed(t, "qemu-io", "qemu-img")
	dir := t.TempDir()
	src, _ := lockImage(t, dir, "src", 1<<20, 1)
	dst, _ := lockImage(t, dir, "dst", 1<<20, 2)
	sf, df := lockOpen(t, src, 0), lockOpen(t, dst, 0)
	if c, err := lockSrc(sf); c != nil || err != nil {
		t.Fatalf("lockSrc: %v %v", c, err)
	}
	if c, err := lockDst(df); c != nil || err != nil {
		t.Fatalf("lockDst: %v %v", c, err)
	}
	qemuWorks(t, "qemu-img", "info", "-f", "raw", src)
	qemuWorks(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", src)
	qemuRefuses(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemuRefuses(t, "qemu-img", "resize", "-f", "raw", src, "2M")
	qemuRefuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", dst)
	qemuRefuses(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
	qemuRefuses(t, "qemu-img", "convert", "-O", "raw", src, dst)
	sf.Close()
	df.Close()
	qemuWorks(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemuWorks(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
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
				pid, _ := qemuNbd(t, dst, args...)
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
	pid, _ := qemuNbd(t, dst)
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
	qemuNbd(t, src, "-r")
	if _, err := Copy(context.Background(), Options{Src: src, Dst: dst, Engine: EnginePool}); err != nil {
		t.Fatalf("SRC served read-only: %v", err)
	}
	lockSameBytes(t, dst, data)

	src2, data2 := lockImage(t, dir, "src2", 1<<20+511, 8)
	pid, _ := qemuNbd(t, src2)
	dst2 := filepath.Join(dir, "dst2")
	_, err := Copy(context.Background(), Options{Src: src2, Dst: dst2, Engine: EnginePool})
	wantRefused(t, err, fmt.Sprintf("SRC is open for writing by qemu-nbd (pid %d): a copy would not be consistent; --force copies anyway", pid))
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
		{"flock-sh", flockIn(unix.LOCK_SH), flockWhat},
		{"flock-ex", flockIn(unix.LOCK_EX), flockWhat},
		{"ofd-write-eof", ofdIn(unix.F_WRLCK, byteRange{0, lockEOF}), writeLockWhat},
		{"ofd-read-qemu", ofdIn(unix.F_RDLCK, byteRange{qemuSharedBase + permResize, 1}), qemuLocksWhat},
		{"posix-write", posixIn(unix.F_WRLCK), writeLockWhat},
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

func ofdIn(typ int16, r byteRange) func(t *testing.T, path string) int {
	return func(t *testing.T, path string) int {
		if err := ofdSet(lockOpen(t, path, os.O_RDWR), typ, r); err != nil {
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
			a, err := first.acquire(&rep)
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
			qemuRefuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 1", dst)
			f := lockOpen(t, dst, 0)
			if c, err := probeDst(f); c == nil || c.what != qemuLocksWhat || err != nil {
				t.Errorf("probe of a held DST: %v, %v", c, err)
			}
			a.release()
			if c, err := probeDst(f); c != nil || err != nil {
				t.Errorf("DST still locked after release: %+v %v", c, err)
			}
		})
	}
}

// TestLocksEndWithCopy: after Copy, neither end keeps a lock (QEMU can
// write both); SRC and DST one file with distinct ranges copies (DST's
// locks cover SRC).
func TestLocksEndWithCopy(t *testing.T) {
	lockNeed(t, "qemu-io")
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
	qemuWorks(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemuWorks(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
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
	pid, stop := qemuNbd(t, dev)
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
	a, err := p.acquire(&rep)
	if err != nil {
		t.Fatal(err)
	}
	qemuRefuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 1", dev)
	a.release()
}

// TestParseLockLine: /proc/locks and fdinfo "lock:" lines.
func TestParseLockLine(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
		want heldLock
	}{
		{"3: OFDLCK ADVISORY  READ -1 fe:00:9978148 100 101", true,
			heldLock{class: "OFDLCK", pid: -1, major: 0xfe, minor: 0, ino: 9978148, start: 100, end: 101}},
		{"\t1: FLOCK  ADVISORY  WRITE 1555 00:06:96 0 EOF", true,
			heldLock{class: "FLOCK", write: true, pid: 1555, major: 0, minor: 6, ino: 96, start: 0, end: -1}},
		{"7: POSIX  ADVISORY  WRITE 12 103:1a:5 4096 4105", true,
			heldLock{class: "POSIX", write: true, pid: 12, major: 0x103, minor: 0x1a, ino: 5, start: 4096, end: 4105}},
		{"7: -> FLOCK  ADVISORY  WRITE 23790 fe:00:9979199 0 EOF", false, heldLock{}},
		{"9: LEASE  ACTIVE    READ 99 fe:00:1 0 EOF", false, heldLock{}},
		{"pos:\t0", false, heldLock{}},
	}
	for _, c := range cases {
		got, ok := parseLockLine(c.line)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%q: %+v %v, want %+v %v", c.line, got, ok, c.want, c.ok)
		}
	}
	l := heldLock{start: 100, end: 101}
	for r, want := range map[byteRange]bool{{99, 1}: false, {99, 2}: true, {101, 1}: true, {102, 3}: false, {0, lockEOF}: true, {102, lockEOF}: false} {
		if l.overlaps(r) != want {
			t.Errorf("[100,101] overlaps %+v: %v, want %v", r, !want, want)
		}
	}
}
