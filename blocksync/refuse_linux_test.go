package blocksync

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// wantRefused fails unless err is a *RefusedError of kind whose message
// says want.
func wantRefused(t *testing.T, err error, kind Kind, want string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || re.Kind != kind || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v (%T), want a %s refusal saying %q", err, err, kind, want)
	}
}

// What a copy refuses, a sync refuses, before writing anything.
func TestOpenTargetRefuses(t *testing.T) {
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src")
	synctest.WriteFile(t, srcPath, synctest.Random(1, 1<<20))
	src, err := OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	t.Run("same file", func(t *testing.T) {
		_, err := OpenTarget(srcPath, TargetOptions{Src: src})
		wantRefused(t, err, KindOverlap, "same bytes")
	})
	t.Run("missing", func(t *testing.T) {
		_, err := OpenTarget(filepath.Join(dir, "nope"), TargetOptions{})
		wantRefused(t, err, KindNotFound, "does not exist")
		_, err = OpenTarget(filepath.Join(dir, "no", "dst"), TargetOptions{Create: true})
		wantRefused(t, err, KindNotFound, "folder does not exist")
	})
	t.Run("folder", func(t *testing.T) {
		_, err := OpenTarget(dir, TargetOptions{})
		wantRefused(t, err, KindNotSupported, "folder")
	})
	t.Run("char device", func(t *testing.T) {
		_, err := OpenTarget("/dev/null", TargetOptions{})
		wantRefused(t, err, KindNotSupported, "neither a regular file nor a block device")
	})
	t.Run("locked by qemu", func(t *testing.T) {
		img := filepath.Join(dir, "img")
		synctest.WriteFile(t, img, make([]byte, 1<<20))
		qemutest.NBD(t, img) // holds QEMU's write locks while it serves
		_, err := OpenTarget(img, TargetOptions{})
		wantRefused(t, err, KindLocked, "DST is locked")
	})
	t.Run("loop over SRC", func(t *testing.T) {
		dev := blocktest.Loop(t, srcPath)
		_, err := OpenTarget(dev, TargetOptions{Src: src})
		wantRefused(t, err, KindOverlap, "same bytes")
	})
	t.Run("mounted", func(t *testing.T) {
		dev, _ := blocktest.Device(t, 64<<20)
		blocktest.Mkfs(t, dev, "ext4")
		blocktest.Mount(t, dev, "ext4", 0)
		_, err := OpenTarget(dev, TargetOptions{Force: true})
		wantRefused(t, err, KindMounted, "mounted")
	})
	t.Run("held while open", func(t *testing.T) {
		// An open block device DST is held (O_EXCL): nothing mounts it
		// under the sync, nor opens it exclusively.
		dev, _ := blocktest.Device(t, 64<<20)
		blocktest.Mkfs(t, dev, "ext4")
		dst, err := OpenTarget(dev, TargetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		if err := unix.Mount(dev, t.TempDir(), "ext4", 0, ""); !errors.Is(err, unix.EBUSY) {
			t.Fatalf("mount of a DST being synced: %v, want EBUSY", err)
		}
		_, err = OpenTarget(dev, TargetOptions{})
		wantRefused(t, err, KindInUse, "")
	})
	t.Run("in use", func(t *testing.T) {
		dev, _ := blocktest.Device(t, 1<<20)
		blocktest.HoldExclusive(t, dev)
		_, err := OpenTarget(dev, TargetOptions{})
		wantRefused(t, err, KindInUse, "Force lifts this")
		dst, err := OpenTarget(dev, TargetOptions{Force: true})
		if err != nil {
			t.Fatalf("Force: %v", err)
		}
		dst.Close()
	})
}

// A block device smaller than SRC is refused before anything is written.
func TestSyncDeviceTooSmall(t *testing.T) {
	dev, _ := devDevice(t, 1<<20)
	old := synctest.Random(5, 1<<20)
	writeDevice(t, dev, old)
	srcPath := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, srcPath, synctest.Random(6, 1<<20+512))
	src, err := OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := OpenTarget(dev, TargetOptions{Src: src})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	_, err = Sync(context.Background(), src, dst, Options{})
	wantRefused(t, err, KindTooSmall, "less than SRC's")
	synctest.SameBytes(t, dev, readDevice(t, dev), old)
}

// SRC is never opened for writing: an immutable SRC (which even root
// cannot open for writing) syncs, and one a QEMU writes is refused.
func TestSourceReadOnly(t *testing.T) {
	blocktest.NeedTool(t, "chattr")
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	want := synctest.Random(3, 3<<20+7)
	synctest.WriteFile(t, srcPath, want)
	synctest.WriteFile(t, dstPath, make([]byte, 100))
	if out, err := exec.Command("chattr", "+i", srcPath).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", srcPath).Run() })
	if f, err := os.OpenFile(srcPath, os.O_RDWR, 0); err == nil {
		f.Close()
		t.Fatal("an immutable file opened for writing: the test proves nothing here")
	}
	syncPaths(t, srcPath, dstPath, Options{})
	synctest.Same(t, dstPath, want)

	img := filepath.Join(dir, "img")
	synctest.WriteFile(t, img, make([]byte, 1<<20))
	qemutest.NBD(t, img) // writable: QEMU's write lock on it
	_, err := OpenSource(img)
	wantRefused(t, err, KindLocked, "SRC is open for writing")
}

// A missing DST is made under a hidden name and appears, complete, only
// at Commit; a sync that fails leaves nothing under either name.
func TestSyncCreates(t *testing.T) {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	want := synctest.Random(8, 2<<20+4097)
	synctest.WriteFile(t, srcPath, want)
	src, err := OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, fail := range []bool{true, false} {
		dst, err := OpenTarget(dstPath, TargetOptions{Create: true, Src: src})
		if err != nil {
			t.Fatal(err)
		}
		if !dst.Created() {
			t.Fatal("Created is false")
		}
		ctx, cancel := context.WithCancel(context.Background())
		if fail {
			cancel()
		}
		_, err = Sync(ctx, src, dst, Options{})
		cancel()
		if _, serr := os.Stat(dstPath); !errors.Is(serr, os.ErrNotExist) {
			t.Fatalf("DST exists before Commit: %v", serr)
		}
		if fail {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled sync: %v", err)
			}
			dst.Close()
			if left, _ := filepath.Glob(filepath.Join(dir, ".dst.*")); len(left) != 0 {
				t.Fatalf("a failed sync left %v", left)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Commit(); err != nil {
			t.Fatal(err)
		}
		dst.Close()
		synctest.Same(t, dstPath, want)
		var st unix.Stat_t
		if err := unix.Stat(dstPath, &st); err != nil || st.Mode&0o777 != 0o644 {
			t.Fatalf("mode %o (umask 022 applied to 0666 wanted): %v", st.Mode&0o777, err)
		}
	}
	// A DST that appears meanwhile is not replaced.
	other := filepath.Join(dir, "other")
	dst, err := OpenTarget(other, TargetOptions{Create: true, Src: src})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := Sync(context.Background(), src, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	synctest.WriteFile(t, other, []byte("theirs"))
	if err := dst.Commit(); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("Commit over a new file: %v", err)
	}
	synctest.Same(t, other, []byte("theirs"))
}
