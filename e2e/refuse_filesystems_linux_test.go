package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// Refusals that depend on the filesystem under SRC or DST: pseudo
// filesystems, devtmpfs, room, the largest file, inode flags and running
// programs. They need root for mounts, chattr and /proc/sys.

// TestRefusePseudoFSDst: a kernel tunable is not a file to copy onto:
// `ringcp --direct never x /proc/sys/vm/swappiness` changed it. A new DST
// whose folder is on sysfs is refused too.
func TestRefusePseudoFSDst(t *testing.T) {
	blocktest.NeedRoot(t)
	const tunable = "/proc/sys/vm/swappiness"
	old, err := os.ReadFile(tunable)
	if err != nil {
		t.Skipf("no %s: %v", tunable, err)
	}
	src := filepath.Join(t.TempDir(), "src")
	value := "7\n"
	if strings.TrimSpace(string(old)) == "7" {
		value = "8\n"
	}
	if err := os.WriteFile(src, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(tunable, old, 0o644) }) // should the refusal fail
	r := cli(t, "--direct", "never", src, tunable)
	r.want(t, exitRefused, tunable+": DST is on proc, a pseudo filesystem: writing there changes the kernel")
	singleLine(t, r)
	if now, _ := os.ReadFile(tunable); !bytes.Equal(now, old) {
		t.Errorf("%s is %q, was %q", tunable, now, old)
	}
	dst := fmt.Sprintf("/sys/kernel/ringcp-test-%d", os.Getpid())
	r = cli(t, src, dst)
	r.want(t, exitRefused, dst+": DST's folder /sys/kernel is on sysfs, a pseudo filesystem")
	singleLine(t, r)
	mustNotExist(t, dst)
}

// TestRefuseNewFileInDev: a device node that does not exist (a typo, a
// disk not plugged in) became a regular file in /dev, with exit 0.
// --force creates it.
func TestRefuseNewFileInDev(t *testing.T) {
	blocktest.NeedRoot(t)
	if devtmpfs := strings.Contains(readFile(t, "/proc/self/mountinfo"), " /dev rw"); !devtmpfs {
		t.Skip("/dev is not a mount here")
	}
	src, data := srcFile(t, 4097)
	dst := fmt.Sprintf("/dev/ringcp-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(dst) })
	r := cli(t, src, dst)
	r.want(t, exitRefused, dst+": no such device; ringcp does not create files in /dev, a devtmpfs (--force does)")
	singleLine(t, r)
	mustNotExist(t, dst)
	cli(t, "--force", src, dst).want(t, exitOK, "ringcp: --force: writing "+dst+" although it is a new file in /dev (devtmpfs), not a device")
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
		t.Errorf("--force: %s holds %d bytes (%v), want SRC's %d", dst, len(got), err, len(data))
	}
}

// TestRefuseNoRoom: on a small ext4, a copy whose data cannot fit is
// refused with both figures, instead of failing with ENOSPC after most of
// it was written. What fits is copied: a sparse SRC needs only its data,
// zeros written as data need no room (zero detection makes them holes),
// and a DST that is truncated gives its blocks back. --force tries
// anyway, and meets ENOSPC while copying as before.
func TestRefuseNoRoom(t *testing.T) {
	dev, _ := loopWith(t, 64<<20, false)
	blocktest.Mkfs(t, dev, "ext4", "-E", "lazy_itable_init=0,lazy_journal_init=0")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	free := freeBytes(t, mnt)
	dst := filepath.Join(mnt, "dst")
	for _, c := range []struct {
		name, how string
		size      int64 // free plus this many bytes of random data
	}{
		{"read whole", " of SRC's data that is not zeros", 8 << 20},                   // up to 64 MiB is read whole
		{"sampled", " of SRC's data that is not zeros, judged by a sample", 32 << 20}, // beyond, sampled
	} {
		big := filepath.Join(t.TempDir(), "big")
		randomFile(t, big, int(free+c.size), 5)
		about := map[bool]string{false: "", true: "about "}[c.name == "sampled"]
		r := cli(t, big, dst)
		r.want(t, exitRefused, fmt.Sprintf("%s: DST's filesystem has %s free, the copy needs %s%s (%d bytes)%s (--force tries anyway)",
			dst, units.Format(free), about, units.Format(free+c.size), free+c.size, c.how))
		singleLine(t, r)
		mustNotExist(t, dst)
	}

	t.Run("sparse", func(t *testing.T) {
		sparse := filepath.Join(t.TempDir(), "sparse")
		randomFile(t, sparse, 1<<20, 6)
		if err := os.Truncate(sparse, 1<<30); err != nil {
			t.Fatal(err)
		}
		cli(t, sparse, dst).want(t, exitOK)
		os.Remove(dst)
		r := cli(t, "--sparse", "never", sparse, dst)
		r.want(t, exitRefused, "the copy needs 1.00 GiB (1073741824 bytes) (--force tries anyway)")
		mustNotExist(t, dst)
	})
	t.Run("zeros", func(t *testing.T) {
		zeros := filepath.Join(t.TempDir(), "zeros")
		if err := os.WriteFile(zeros, make([]byte, free+32<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		cli(t, zeros, dst).want(t, exitOK)
		if digest(t, dst) != digest(t, zeros) {
			t.Error("DST does not hold SRC's zeros")
		}
		os.Remove(dst)
	})
	t.Run("truncated DST gives back", func(t *testing.T) {
		randomFile(t, dst, 32<<20, 7)
		syscall.Sync()
		src := filepath.Join(t.TempDir(), "src")
		randomFile(t, src, int(freeBytes(t, mnt)+16<<20), 8)
		cli(t, src, dst).want(t, exitOK)
		if digest(t, dst) != digest(t, src) {
			t.Error("DST does not hold SRC")
		}
		os.Remove(dst)
	})
	t.Run("force", func(t *testing.T) {
		big := filepath.Join(t.TempDir(), "big")
		randomFile(t, big, int(free+8<<20), 9)
		r := cli(t, "--force", big, dst)
		r.want(t, exitFailed, "ringcp: --force: writing "+dst+" although DST's filesystem has", "no space left on device (ENOSPC)")
		mustNotExist(t, dst)
	})
}

// freeBytes is what root may still allocate on the filesystem at dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bfree) * st.Frsize
}

// hugeSparseOnXFS makes a sparse file of size bytes (XFS allows up to
// math.MaxInt64; ext4 16 TiB) with data in its last 8 KiB, on a fresh
// XFS, and returns it, the data and the mount point.
func hugeSparseOnXFS(t *testing.T, size int64) (path string, tail []byte, mnt string) {
	t.Helper()
	dev, _ := loopWith(t, 320<<20, false)
	blocktest.Mkfs(t, dev, "xfs")
	mnt = blocktest.Mount(t, dev, "xfs", 0)
	path = filepath.Join(mnt, "huge")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatalf("truncate to %d on xfs: %v", size, err)
	}
	tail = bytes.Repeat([]byte("8 EiB!"), 8192/6)
	if _, err := f.WriteAt(tail, size-int64(len(tail))); err != nil {
		t.Fatal(err)
	}
	return path, tail, mnt
}

// TestHugeSparseSource: a sparse SRC of 9223372036854775000 bytes made the
// planner print "queue depth -1099511627775" and fail. Prepare must now
// choose sane sizes; a copy onto ext4, whose files end at 16 TiB, is
// refused up front; a range at its very end copies exactly.
func TestHugeSparseSource(t *testing.T) {
	const size = 9223372036854775000
	huge, tail, mnt := hugeSparseOnXFS(t, size)
	plan, err := copier.Prepare(copier.Options{Src: huge, Dst: filepath.Join(mnt, "copy"), Offload: copier.OffloadNever})
	if err != nil {
		t.Fatal(err)
	}
	if plan.BlockSize <= 0 || plan.QueueDepth < 1 || plan.QueueDepth > 1024 || plan.Length != size {
		t.Errorf("plan: block size %d, queue depth %d, length %d", plan.BlockSize, plan.QueueDepth, plan.Length)
	}
	for _, n := range plan.Notes {
		if strings.Contains(n, "-1") {
			t.Errorf("note %q", n)
		}
	}

	ext4, _ := loopWith(t, 64<<20, false)
	blocktest.Mkfs(t, ext4, "ext4", "-b", "4096") // 16 TiB - 4 KiB files; 1 KiB blocks allow 4 TiB
	onExt4 := filepath.Join(blocktest.Mount(t, ext4, "ext4", 0), "copy")
	r := cli(t, huge, onExt4)
	r.want(t, exitRefused, onExt4+": the copy would end at byte 9223372036854775000 (8.00 EiB), past the largest file DST's filesystem allows (17592186040320 bytes, 16.0 TiB)")
	singleLine(t, r)
	mustNotExist(t, onExt4)
	src, _ := srcFile(t, 4096)
	cli(t, "--dst-offset", "17T", src, onExt4).want(t, exitRefused, "past the largest file DST's filesystem allows (17592186040320 bytes, 16.0 TiB)")
	mustNotExist(t, onExt4)

	top := filepath.Join(mnt, "top")
	cli(t, "--src-offset", fmt.Sprint(size-1<<20-5), huge, top).want(t, exitOK)
	want := append(make([]byte, 1<<20+5-len(tail)), tail...)
	if got, _ := os.ReadFile(top); !bytes.Equal(got, want) {
		t.Errorf("the last 1 MiB + 5 bytes of SRC: DST holds %d bytes, not SRC's", len(got))
	}
	cli(t, "--dst-offset", fmt.Sprint(int64(math.MaxInt64)-4096), src, top).want(t, exitOK)
	if got := readRange(t, top, math.MaxInt64-4096, 4096); !bytes.Equal(got, readRange(t, src, 0, 4096)) {
		t.Error("4096 bytes written to end at math.MaxInt64 do not read back")
	}
}

// TestRefuseUnwritableDst: an append-only file, an immutable one and a
// running program fail the copy's open; that must be a refusal with
// nothing written, not exit 1.
func TestRefuseUnwritableDst(t *testing.T) {
	blocktest.NeedTool(t, "chattr")
	src, _ := srcFile(t, 8192)
	for _, attr := range []struct{ flag, want string }{
		{"+a", "DST is append-only (chattr +a): it cannot be overwritten or truncated"},
		{"+i", "DST is not writable"},
	} {
		dst := filepath.Join(t.TempDir(), "dst")
		randomFile(t, dst, 5000, 3)
		if out, err := exec.Command("chattr", attr.flag, dst).CombinedOutput(); err != nil {
			t.Skipf("chattr %s: %v: %s", attr.flag, err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-a", "-i", dst).Run() })
		refusedUntouched(t, []string{src, dst}, dst, attr.want)
	}
	prog := runningProgram(t)
	refusedUntouched(t, []string{src, prog}, prog, prog+": DST is busy: a program that is running, or an active swap file: text file busy")
}

// refusedUntouched checks a refusal with one line on stderr and DST the
// same bytes, size and mtime as before.
func refusedUntouched(t *testing.T, args []string, dst, want string) {
	t.Helper()
	before := snap(t, dst)
	r := cli(t, args...)
	r.want(t, exitRefused, want)
	singleLine(t, r)
	before.Same(t)
}

// runningProgram copies sleep and runs it until the test ends.
func runningProgram(t *testing.T) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep: %v", err)
	}
	prog := filepath.Join(t.TempDir(), "prog")
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "600")
	for range 50 {
		// A child forked meanwhile by another test may still hold prog
		// open for writing: exec then fails with ETXTBSY for a moment.
		if err = cmd.Start(); !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
		cmd = exec.Command(prog, "600")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return prog
}

func singleLine(t *testing.T, r result) {
	t.Helper()
	if lines := strings.Count(r.stderr, "\n"); lines != 1 || !strings.HasPrefix(r.stderr, "ringcp: ") {
		t.Errorf("stderr has %d lines, want one starting with \"ringcp: \":\n%s", lines, r.stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
