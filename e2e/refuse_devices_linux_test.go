package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// Tests of what ringcp refuses to write, on real loop devices, partitions,
// file systems and mounts. Each checks exit 2, the reason on stderr, and
// that nothing was written (the backing files hash the same).

const mountedNever = "not even with --force"

// loopWith attaches a file of size bytes (random when data) to a loop
// device with extra losetup options; it returns the device and the file.
func loopWith(t *testing.T, size int64, data bool, opts ...string) (dev, file string) {
	t.Helper()
	file = blocktest.SparseFile(t, size)
	if data {
		randomFile(t, file, int(size), uint64(size))
	}
	return blocktest.Loop(t, file, opts...), file
}

// frozen freezes the file system mounted on mnt until the test ends, so
// that its own background writes (a btrfs commit, ext4 writeback) cannot
// change the backing file while a test checks that ringcp wrote nothing.
func frozen(t *testing.T, mnt string) {
	t.Helper()
	blocktest.NeedTool(t, "fsfreeze")
	blocktest.Run(t, "fsfreeze", "--freeze", mnt)
	t.Cleanup(func() { blocktest.Run(t, "fsfreeze", "--unfreeze", mnt) })
}

// refused runs ringcp and checks it refused with all of want on stderr and
// that none of files changed (bytes and mtime).
func refused(t *testing.T, args []string, files []string, want ...string) {
	t.Helper()
	before := make([]snapshot, len(files))
	for i, f := range files {
		before[i] = snap(t, f)
	}
	cli(t, args...).want(t, exitRefused, want...)
	for _, s := range before {
		s.Same(t)
	}
}

func srcFile(t *testing.T, size int) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src")
	return path, randomFile(t, path, size, 42)
}

// TestRefuseMounted: a mounted DST is refused, with --force too, also when
// SRC lives on it; the mount point is named.
func TestRefuseMounted(t *testing.T) {
	dev, file := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	src, _ := srcFile(t, 1<<20)
	// SRC a file on the device's own file system.
	inside := filepath.Join(mnt, "src")
	randomFile(t, inside, 1<<20, 43)
	frozen(t, mnt)
	refused(t, []string{src, dev}, []string{file}, dev+" is mounted on "+mnt+" (ext4)")
	refused(t, []string{"--force", src, dev}, []string{file}, dev+" is mounted on "+mnt, mountedNever)
	refused(t, []string{"--force", inside, dev}, []string{file}, dev+" is mounted on "+mnt, mountedNever)
}

// TestRefuseMountedBtrfs: btrfs shows an anonymous device number in
// mountinfo, so the mount must be found by its source device.
func TestRefuseMountedBtrfs(t *testing.T) {
	dev, file := loopWith(t, 128<<20, false)
	blocktest.Mkfs(t, dev, "btrfs")
	mnt := blocktest.Mount(t, dev, "btrfs", 0)
	src, _ := srcFile(t, 1<<20)
	frozen(t, mnt)
	refused(t, []string{"--force", src, dev}, []string{file}, dev+" is mounted on "+mnt+" (btrfs)", mountedNever)
}

// TestRefuseMountedPartition: a disk one of whose partitions is mounted
// is refused as DST, with --force too.
func TestRefuseMountedPartition(t *testing.T) {
	disk, file := loopWith(t, 48<<20, false, "--partscan")
	part := blocktest.Partition(t, disk, 1, 1<<20, 40<<20)
	blocktest.Mkfs(t, part, "ext4")
	mnt := blocktest.Mount(t, part, "ext4", 0)
	src, _ := srcFile(t, 1<<20)
	frozen(t, mnt)
	refused(t, []string{"--force", src, disk}, []string{file}, part+" is mounted on "+mnt, mountedNever)
}

// TestRefusePartitionOfMountedDisk: a partition of a disk that is itself
// mounted (a file system on the whole disk) is refused, with --force too.
func TestRefusePartitionOfMountedDisk(t *testing.T) {
	disk, file := loopWith(t, 48<<20, false, "--partscan")
	blocktest.Mkfs(t, disk, "ext4")
	mnt := blocktest.Mount(t, disk, "ext4", 0)
	part := blocktest.Partition(t, disk, 1, 8<<20, 8<<20)
	src, _ := srcFile(t, 1<<20)
	frozen(t, mnt)
	refused(t, []string{"--force", src, part}, []string{file}, disk+" is mounted on "+mnt, mountedNever)
}

// TestRefuseMountedInOtherNamespace: a device mounted only in another
// mount namespace (a container, `unshare -m`) showed here only as "open
// exclusively", and --force then wrote onto the mounted filesystem. It is
// mounted: refused, with --force too, naming the namespace's process.
func TestRefuseMountedInOtherNamespace(t *testing.T) {
	blocktest.NeedTool(t, "unshare")
	dev, file := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := t.TempDir()
	// Read-only: the mount writes nothing, so the backing file only
	// changes if ringcp writes.
	holder := exec.Command("unshare", "--mount", "--propagation", "private",
		"sh", "-c", `mount -o ro "$1" "$2" && echo mounted && exec sleep 600`, "sh", dev, mnt)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { holder.Process.Kill(); holder.Wait() }
	t.Cleanup(stop)
	line := make([]byte, 8)
	if n, err := io.ReadFull(out, line); err != nil || string(line[:n]) != "mounted\n" {
		t.Fatalf("unshare: mount %s on %s in a new namespace: %q, %v", dev, mnt, line[:n], err)
	}
	src, _ := srcFile(t, 1<<20)
	where := fmt.Sprintf("%s is mounted on %s (ext4) in the mount namespace of pid %d (sleep)", dev, mnt, holder.Process.Pid)
	refused(t, []string{src, dev}, []string{file}, where, mountedNever)
	refused(t, []string{"--force", src, dev}, []string{file}, where, mountedNever)

	stop()
	for i := 0; ; i++ { // the namespace, and its mount, go with their last process
		f, err := os.OpenFile(dev, os.O_RDONLY|os.O_EXCL, 0)
		if err == nil {
			f.Close()
			break
		}
		if i == 100 {
			t.Fatalf("%s still in use after the namespace's process ended: %v", dev, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRefuseSwap: active swap is refused, with --force too.
func TestRefuseSwap(t *testing.T) {
	blocktest.NeedTool(t, "mkswap")
	blocktest.NeedTool(t, "swapon")
	dev, file := loopWith(t, 16<<20, false)
	blocktest.Run(t, "mkswap", dev)
	if out, err := exec.Command("swapon", "--priority", "-2", dev).CombinedOutput(); err != nil {
		t.Skipf("swapon %s: %v\n%s", dev, err, out)
	}
	t.Cleanup(func() { blocktest.Run(t, "swapoff", dev) })
	src, _ := srcFile(t, 1<<20)
	refused(t, []string{"--force", src, dev}, []string{file}, dev+" is active swap", mountedNever)
}

// TestRefuseHeldExclusive: a device another program holds with O_EXCL is
// refused; --force writes it.
func TestRefuseHeldExclusive(t *testing.T) {
	dev, file := loopWith(t, 4<<20, false)
	blocktest.HoldExclusive(t, dev)
	src, data := srcFile(t, 1<<20)
	// The test's own process holds it: the refusal names it.
	holder := fmt.Sprintf("%s is open exclusively by %s (pid %d)", dev, filepath.Base(os.Args[0])[:min(15, len(filepath.Base(os.Args[0])))], os.Getpid())
	refused(t, []string{src, dev}, []string{file}, holder, "(--force writes anyway)")
	cli(t, "--force", src, dev).want(t, exitOK, "ringcp: --force: writing "+dev+" although "+dev+" is open exclusively")
	if !bytes.Equal(readRange(t, dev, 0, int64(len(data))), data) {
		t.Error("--force: DST does not hold SRC")
	}
}

// TestRefuseLoopOnDst: a file that backs a loop device is in use (--force
// writes it); once that loop device is mounted it is refused for good.
func TestRefuseLoopOnDst(t *testing.T) {
	dev, file := loopWith(t, 32<<20, false)
	src, data := srcFile(t, 1<<20)
	refused(t, []string{src, file}, []string{file}, "loop device "+dev+" shows DST's bytes", "(--force writes anyway)")
	cli(t, "--force", "--length", "1M", src, file).want(t, exitOK, "ringcp: --force: writing "+file+" although loop device "+dev)
	if !bytes.Equal(readRange(t, file, 0, 1<<20), data) {
		t.Error("--force: DST does not hold SRC")
	}
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	frozen(t, mnt)
	refused(t, []string{"--force", src, file}, []string{file}, "loop device "+dev+" shows DST's bytes, and "+dev+" is mounted on "+mnt, mountedNever)
}

// TestRefuseLoopOverlap: a loop device and the file behind it are the
// same bytes. A copy between them is refused where the ranges meet and
// done where they do not. The loop shows bytes 2-3 MiB of the file.
func TestRefuseLoopOverlap(t *testing.T) {
	dev, file := loopWith(t, 4<<20, true, "--offset", "2097152", "--sizelimit", "1048576")
	old := readRange(t, file, 0, 4<<20)
	overlap := "SRC and DST overlap on " + file
	refused(t, []string{file, dev}, []string{file}, overlap)
	refused(t, []string{"--src-offset", "2M", "--length", "1M", file, dev}, []string{file}, overlap)
	refused(t, []string{dev, file}, []string{file}, overlap)
	refused(t, []string{"--dst-offset", "2M", "--length", "1M", dev, file}, []string{file}, overlap)

	cli(t, "--length", "1M", file, dev).want(t, exitOK) // file 0-1 MiB onto 2-3 MiB
	if got := readRange(t, file, 2<<20, 1<<20); !bytes.Equal(got, old[:1<<20]) {
		t.Error("file bytes 0-1 MiB did not land at 2-3 MiB through the loop device")
	}
	cli(t, "--dst-offset", "3M", "--length", "1M", dev, file).want(t, exitOK) // 2-3 MiB onto 3-4 MiB
	if got := readRange(t, file, 3<<20, 1<<20); !bytes.Equal(got, old[:1<<20]) {
		t.Error("the loop device's bytes did not land at 3-4 MiB of its file")
	}
}

// TestRefusePartitionOverlap: a disk and its own partition (1-9 MiB of
// the disk) overlap where the partition lies.
func TestRefusePartitionOverlap(t *testing.T) {
	disk, file := loopWith(t, 16<<20, true, "--partscan")
	part := blocktest.Partition(t, disk, 1, 1<<20, 8<<20)
	old := readRange(t, file, 0, 16<<20)
	overlap := "SRC and DST overlap on " + disk
	refused(t, []string{disk, part}, []string{file}, overlap)
	refused(t, []string{"--dst-offset", "8M", part, disk}, []string{file}, overlap)
	refused(t, []string{"--src-offset", "4M", "--length", "4M", disk, part}, []string{file}, overlap)

	cli(t, "--length", "4M", "--dst-offset", "12M", part, disk).want(t, exitOK)
	if got := readRange(t, disk, 12<<20, 4<<20); !bytes.Equal(got, old[1<<20:5<<20]) {
		t.Error("partition bytes 0-4 MiB did not land at 12-16 MiB of the disk")
	}
}

// TestRefuseSameDevice: two device nodes of one disk are one device.
func TestRefuseSameDevice(t *testing.T) {
	dev, file := loopWith(t, 4<<20, true)
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(t.TempDir(), "alias")
	if err := unix.Mknod(alias, unix.S_IFBLK|0o600, int(st.Rdev)); err != nil {
		t.Skipf("mknod %s: %v", alias, err)
	}
	refused(t, []string{dev, alias}, []string{file}, "SRC and DST are the same block device")
}

// TestRefuseTooSmall: a block device smaller than what is to be written,
// or an offset past its end.
func TestRefuseTooSmall(t *testing.T) {
	dev, file := loopWith(t, 1<<20, false)
	src, _ := srcFile(t, 2<<20)
	refused(t, []string{src, dev}, []string{file}, "block device too small: 1.00 MiB (1048576 bytes), the copy needs 2.00 MiB (2097152 bytes)")
	refused(t, []string{"--dst-offset", "1M", "--length", "4k", src, dev}, []string{file}, "the copy needs 1.00 MiB (1052672 bytes)")
}

// TestReadOnlySource: SRC is only ever opened read-only, so a SRC nobody
// can write is copied: an immutable file (even root cannot open it for
// writing), a read-only loop device, and a file with mode 0444 (which
// proves it only when not root).
func TestReadOnlySource(t *testing.T) {
	t.Run("mode-0444", func(t *testing.T) {
		src, data := srcFile(t, 1<<20+3)
		if err := os.Chmod(src, 0o444); err != nil {
			t.Fatal(err)
		}
		copyAndCompare(t, src, data)
	})
	t.Run("immutable", func(t *testing.T) {
		blocktest.NeedTool(t, "chattr")
		src, data := srcFile(t, 1<<20+3)
		if out, err := exec.Command("chattr", "+i", src).CombinedOutput(); err != nil {
			t.Skipf("chattr +i: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", src).Run() })
		if f, err := os.OpenFile(src, os.O_WRONLY, 0); err == nil {
			f.Close()
			t.Fatal("an immutable file opened for writing: the test proves nothing")
		}
		copyAndCompare(t, src, data)
	})
	t.Run("read-only-loop", func(t *testing.T) {
		dev, file := loopWith(t, 2<<20, true, "--read-only")
		data := readRange(t, file, 0, 2<<20)
		copyAndCompare(t, dev, data)
	})
}

func copyAndCompare(t *testing.T, src string, data []byte) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "dst")
	cli(t, src, dst).want(t, exitOK)
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("DST: %d bytes (%v), want SRC's %d", len(got), err, len(data))
	}
}
