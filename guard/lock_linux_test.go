package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/qemutest"
)

// openImage writes a 1 MiB file in dir and opens it read-only until the
// test ends.
func openImage(t *testing.T, dir, name string) (string, *os.File) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// TestLocksAsQEMUSeesThem: with SRC's locks on a file, QEMU reads it
// (qemu-img info, qemu-io -r) but cannot open it for writing or resize it;
// with DST's locks, QEMU cannot open it at all. Dropping the locks
// (closing the descriptor) frees both.
func TestLocksAsQEMUSeesThem(t *testing.T) {
	qemutest.Need(t, "qemu-io", "qemu-img")
	dir := t.TempDir()
	src, sf := openImage(t, dir, "src")
	dst, df := openImage(t, dir, "dst")
	if c, err := LockSrc(sf); c != nil || err != nil {
		t.Fatalf("LockSrc: %v %v", c, err)
	}
	if c, err := LockDst(df); c != nil || err != nil {
		t.Fatalf("LockDst: %v %v", c, err)
	}
	qemutest.Works(t, "qemu-img", "info", "-f", "raw", src)
	qemutest.Works(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", src)
	qemutest.Refuses(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemutest.Refuses(t, "qemu-img", "resize", "-f", "raw", src, "2M")
	qemutest.Refuses(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", dst)
	qemutest.Refuses(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
	qemutest.Refuses(t, "qemu-img", "convert", "-O", "raw", src, dst)
	sf.Close()
	df.Close()
	qemutest.Works(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemutest.Works(t, "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
}

// TestQemuNbdHolders: qemu-nbd serving an image writable conflicts with a
// SRC and a DST and is named as the holder; served read-only (-r) it
// conflicts only with a DST.
func TestQemuNbdHolders(t *testing.T) {
	for _, ro := range []bool{false, true} {
		image, f := openImage(t, t.TempDir(), "image")
		var args []string
		if ro {
			args = []string{"-r"}
		}
		pid, stop := qemutest.NBD(t, image, args...)
		want := processName(pid)
		c, err := CheckSrc(f)
		if err != nil || (c != nil) == ro {
			t.Errorf("read-only %v: CheckSrc = %+v, %v", ro, c, err)
		}
		c, err = CheckDst(f)
		if err != nil || c == nil || c.What != QEMULocks {
			t.Fatalf("read-only %v: CheckDst = %+v, %v; want QEMU's locks", ro, c, err)
		}
		if names, n := c.Holders(f); names != want || n != 1 {
			t.Errorf("read-only %v: holders %q (%d), want %q", ro, names, n, want)
		}
		stop()
		if c, err := CheckDst(f); c != nil || err != nil {
			t.Errorf("read-only %v: after qemu-nbd stopped: %+v, %v", ro, c, err)
		}
	}
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
