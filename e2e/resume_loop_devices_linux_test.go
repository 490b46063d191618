package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// A resumed copy onto a loop device knows it by its backing file: the
// device attached to another file of the same size is refused, a write
// to its backing file between the runs is found, and the same file
// attached again (as after a reboot) is the same DST. On XFS, which gives
// a freed inode number to the next new file at once, a file that took
// the partial DST's number is not taken for it.

// loopOf attaches file to a free loop device, with direct I/O, and
// detaches it when the test ends if file still backs it.
func loopOf(t *testing.T, file string) string {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", file).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup %s: %v\n%s", file, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { detachIfMine(dev, file) })
	return dev
}

// loopTo attaches file to dev, which must be free, and detaches it when
// the test ends, if it is still this file's.
func loopTo(t *testing.T, dev, file string) {
	t.Helper()
	if out, err := exec.Command("losetup", "--direct-io=on", dev, file).CombinedOutput(); err != nil {
		t.Fatalf("losetup %s %s (the device was taken meanwhile?): %v\n%s", dev, file, err, out)
	}
	t.Cleanup(func() { detachIfMine(dev, file) })
}

// detachIfMine detaches dev if file still backs it: on a shared machine
// another test may have attached it since.
func detachIfMine(dev, file string) {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	if err == nil && strings.TrimSpace(string(b)) == file {
		exec.Command("losetup", "-d", dev).Run()
	}
}

// reattach detaches dev and attaches file to it at once.
func reattach(t *testing.T, dev, was, file string) {
	t.Helper()
	detachIfMine(dev, was)
	loopTo(t, dev, file)
}

// TestResumeLoopDevice: a copy onto a loop device stopped (SIGINT) or
// killed; between the runs its backing file written (refused, then the
// same bytes put back: accepted), the device attached to another file of
// the same size (refused), and the first file attached to it again
// (accepted: DST is SRC). Both engines.
func TestResumeLoopDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.img")
			data := randomFile(t, src, resumeSize, 54)
			backing, other := filepath.Join(dir, "backing.img"), filepath.Join(dir, "other.img")
			randomFile(t, backing, resumeSize+1<<20, 55)
			randomFile(t, other, resumeSize+1<<20, 56)
			dev := loopOf(t, backing)
			state := filepath.Join(t.TempDir(), "state")
			stoppedAfter(t, state, 16<<20, "--engine", eng, "--state", state, src, dev)
			keepState := snap(t, state)

			blocktest.Run(t, "dd", "if=/dev/zero", "of="+backing, "bs=1M", "seek=4", "count=1", "conv=notrunc,fsync", "status=none")
			cli(t, "--resume", "--engine", eng, "--state", state, src, dev).want(t, 2, "changed since the earlier run: it differs from SRC at offset 4194304,")
			f, err := os.OpenFile(backing, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(data[4<<20:5<<20], 4<<20)
			f.Close()

			reattach(t, dev, backing, other)
			mixed := snap(t, other)
			cli(t, "--resume", "--engine", eng, "--state", state, src, dev).want(t, 2, "is not the DST the resume state records: its backing file is "+other+" now")
			mixed.Same(t)
			keepState.Same(t)

			reattach(t, dev, other, backing)
			cli(t, "-v", "--resume", "--engine", eng, "--state", state, src, dev).want(t, 0, "is compared with SRC before anything is written")
			sameBytes(t, "the loop device after the resumed copy", readRange(t, dev, 0, resumeSize), data)
			mustNotExist(t, state)
		})
	}
}

// TestResumeInodeReused: on XFS, the partial DST of a killed copy
// removed, and DST a new file that got the partial file's inode number,
// written by cp: the rerun is refused (the inode is another file's now)
// and DST is left as cp made it. Both engines.
func TestResumeInodeReused(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dev, _ := blocktest.Device(t, 512<<20)
			blocktest.Mkfs(t, dev, "xfs")
			mnt := blocktest.Mount(t, dev, "xfs", 0)
			dir := t.TempDir()
			src, other := filepath.Join(dir, "src.img"), filepath.Join(dir, "other.img")
			randomFile(t, src, resumeSize, 57)
			randomFile(t, other, resumeSize, 58)
			dst := filepath.Join(mnt, "dst.img")
			partial, state := dst+".ringcp-partial", copier.StatePath(dst)
			killedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			was := inode(t, partial)
			waitUnlocked(t, partial) // the killed ring's files close after it dies
			if err := os.Remove(partial); err != nil {
				t.Fatal(err)
			}
			cpOntoInode(t, mnt, other, dst, was)
			made := snap(t, dst)
			cli(t, "--resume", "--engine", eng, src, dst).want(t, 2, "is not the DST the resume state records: it is another file now: its inode number was freed and given to a new file")
			made.Same(t)
		})
	}
}

// cpOntoInode makes dst a new file with inode number ino holding src's
// bytes: the first new file in dir that gets ino is renamed to dst, and
// cp writes src into it (cp keeps the inode of a DST that exists). Left
// to cp, the number was not reused under CI's load: XFS handed cp's new
// file another number, even right after a filler had held ino.
func cpOntoInode(t *testing.T, dir, src, dst string, ino uint64) {
	t.Helper()
	if err := os.Rename(takeInode(t, dir, ino), dst); err != nil {
		t.Fatal(err)
	}
	blocktest.Run(t, "cp", src, dst)
	if now := inode(t, dst); now != ino {
		t.Fatalf("cp's DST has inode %d, not the partial file's %d", now, ino)
	}
}

// takeInode fills dir with empty files until one gets inode number ino,
// and returns its name: XFS gives a new file the lowest free number, and
// the state file's rewrites freed some below the partial file's. A
// removed inode is free once XFS has inactivated it, in the background:
// syncfs waits for that.
func takeInode(t *testing.T, dir string, ino uint64) string {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 2000 {
		if i%20 == 0 {
			unix.Syncfs(int(d.Fd()))
		}
		filler := filepath.Join(dir, "filler-"+strconv.Itoa(i))
		if err := os.WriteFile(filler, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if inode(t, filler) == ino {
			return filler
		}
	}
	t.Fatalf("no new file in %s got inode %d", dir, ino)
	return ""
}

// waitUnlocked waits until nothing holds path's flock: a killed ringcp's
// io_uring closes its files only after the process is gone.
func waitUnlocked(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 500 {
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s is still locked 5 s after its ringcp was killed", path)
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestResumeLoopSource: a loop device SRC is known by its backing file
// too, marks included: that file written between the runs refuses the
// rerun, as a file SRC modified does.
func TestResumeLoopSource(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	backing, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
	randomFile(t, backing, resumeSize, 65)
	src := loopOf(t, backing)
	state := copier.StatePath(dst)
	stoppedAfter(t, state, 8<<20, src, dst)
	blocktest.Run(t, "dd", "if=/dev/zero", "of="+backing, "bs=1M", "seek=40", "count=1", "conv=notrunc,fsync", "status=none")
	cli(t, "--resume", src, dst).want(t, 2, src+": changed since the copy that the resume state records: it was modified (mtime")
}

// TestResumeLoopDeviceCached: with --direct never, the part already
// copied is read through the loop device's page cache, which (the device
// held open meanwhile) still holds what the earlier run wrote; its
// backing file written directly since is found all the same: the range
// is dropped from the cache first.
func TestResumeLoopDeviceCached(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	src, backing := filepath.Join(dir, "src.img"), filepath.Join(dir, "backing.img")
	randomFile(t, src, resumeSize, 66)
	randomFile(t, backing, resumeSize+1<<20, 67)
	dev := loopOf(t, backing)
	// A device's page cache goes with its last close: held open, it
	// keeps what the copy wrote until the rerun reads it.
	holder, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	state := filepath.Join(t.TempDir(), "state")
	r := startResumableWith(t, state, resumeFlags(1, "never"), "--max-rate", "8M", "--state", state, src, dev) // buffered, it would be done at once
	waitRecorded(t, r, state, 8<<20)
	r.signal(t, syscall.SIGINT)
	<-r.exited
	if _, err := holder.ReadAt(make([]byte, 8<<20), 0); err != nil { // cached, if not already
		t.Fatal(err)
	}
	blocktest.Run(t, "dd", "if=/dev/zero", "of="+backing, "bs=1M", "seek=2", "count=1", "conv=notrunc", "oflag=direct", "status=none")
	cli(t, "--resume", "--direct", "never", "--state", state, src, dev).want(t, 2, "it differs from SRC at offset 2097152,")
}
