package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// place is a folder on one kind of filesystem, and what the engine rule
// says about a file there: notUsed is "" where io_uring may run, else the
// start of FallbackReason, and why its end.
type place struct {
	fs      string
	dir     string
	notUsed string // "io_uring is not used on NAME" or ""
	why     string // what the reason says after the side
}

// TestEngineRule: engine auto uses io_uring where both sides are files on
// ext4, xfs, btrfs or tmpfs, or block devices, and the pool, with the
// reason, where either side is a file on FUSE, overlayfs or a filesystem
// not checked (ramfs); --engine uring is refused there. SRC, a new DST (its
// folder decides) and an existing DST are each put there in turn, the
// other side on a tmpfs.
func TestEngineRule(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	local := memDir(t, "tmpfs")
	places := []place{
		{"ext4", fsDir(t, "ext4", 64<<20), "", ""},
		{"xfs", fsDir(t, "xfs", 320<<20), "", ""},
		{"btrfs", fsDir(t, "btrfs", 256<<20), "", ""},
		{"tmpfs", memDir(t, "tmpfs"), "", ""},
		{"fuse", faultfs.Mount(t, t.TempDir()).Dir, "io_uring is not used on fuse", "the kernel can complete a short FUSE direct-I/O request as whole"},
		{"overlayfs", overlayDir(t, t.TempDir()), "io_uring is not used on overlayfs", "overlayfs passes I/O to the filesystem below it, which may be FUSE, and which ringcp cannot see"},
		{"ramfs", memDir(t, "ramfs"), "io_uring is not used on ramfs", "ringcp has not checked that the kernel reports its short reads and writes as short there"},
	}
	for _, pl := range places {
		writeFile(t, filepath.Join(pl.dir, "src"), noise(8192, 31))
		writeFile(t, filepath.Join(pl.dir, "old"), noise(4096, 32))
		sides := []struct {
			tag, src, dst, side string
		}{
			{"src", filepath.Join(pl.dir, "src"), filepath.Join(local, pl.fs+"-new"), "SRC"},
			{"dst-new", filepath.Join(local, "src"), filepath.Join(pl.dir, "new"), "DST"},
			{"dst-existing", filepath.Join(local, "src"), filepath.Join(pl.dir, "old"), "DST"},
		}
		writeFile(t, filepath.Join(local, "src"), noise(8192, 33))
		for _, s := range sides {
			t.Run(pl.fs+"/"+s.tag, func(t *testing.T) {
				want := ""
				if pl.notUsed != "" {
					path := map[string]string{"SRC": s.src, "DST": s.dst}[s.side]
					want = fmt.Sprintf("%s (%s %s): %s", pl.notUsed, s.side, path, pl.why)
				}
				checkRule(t, copier.Options{Src: s.src, Dst: s.dst}, want)
			})
		}
	}
	t.Run("block devices", func(t *testing.T) {
		src, _ := blocktest.Device(t, 1<<20)
		dst, _ := blocktest.Device(t, 1<<20)
		checkRule(t, copier.Options{Src: src, Dst: dst}, "")
	})
}

// checkRule prepares opts with engine auto and with engine uring, and
// wants io_uring chosen when want is "", else the pool with want as the
// reason and uring refused with it.
func checkRule(t *testing.T, opts copier.Options, want string) {
	t.Helper()
	opts.Engine = copier.EngineAuto
	p, err := copier.Prepare(opts)
	if err != nil {
		t.Fatal(err)
	}
	if want == "" {
		if p.Backend != copier.EngineUring || p.FallbackReason != "" {
			t.Errorf("%s -> %s: engine %s (%q); want io_uring", opts.Src, opts.Dst, p.Backend, p.FallbackReason)
		}
		return
	}
	if p.Backend != copier.EnginePool || p.FallbackReason != want {
		t.Errorf("%s -> %s: engine %s, reason %q; want the pool, %q", opts.Src, opts.Dst, p.Backend, p.FallbackReason, want)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "engine pool: "+want) {
		t.Errorf("notes %q do not say why the pool is used", p.Notes)
	}
	opts.Engine = copier.EngineUring
	_, err = copier.Prepare(opts)
	var re *copier.RefusedError
	if !errors.As(err, &re) || err.Error() != "Options.Engine uring: "+want {
		t.Errorf("Options.Engine uring: err = %v; want a *copier.RefusedError %q", err, "Options.Engine uring: "+want)
	}
}

// fsDir makes a filesystem of type fstype on a loop device of size bytes,
// mounts it and returns the mount point.
func fsDir(t *testing.T, fstype string, size int64) string {
	t.Helper()
	dev, _ := blocktest.Device(t, size)
	blocktest.Mkfs(t, dev, fstype)
	return blocktest.Mount(t, dev, fstype, 0)
}

// memDir mounts a tmpfs or ramfs on a new folder until the test ends.
func memDir(t *testing.T, fstype string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount(fstype, dir, fstype, 0, ""); err != nil {
		t.Skipf("mount %s: %v", fstype, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// overlayDir mounts an overlayfs with lower as its lower layer and a
// writable upper layer on the test's disk.
func overlayDir(t *testing.T, lower string) string {
	t.Helper()
	up, dir := t.TempDir(), t.TempDir()
	upper, work := filepath.Join(up, "upper"), filepath.Join(up, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work)
	if err := unix.Mount("overlay", dir, "overlay", 0, data); err != nil {
		t.Skipf("mount overlay: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestEngineRuleClean: where the rule keeps io_uring, a copy with engine
// auto uses it and is byte-exact (here on tmpfs to xfs), so the rule did
// not just switch io_uring off everywhere.
func TestEngineRuleClean(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	src, dst := filepath.Join(memDir(t, "tmpfs"), "src"), filepath.Join(fsDir(t, "xfs", 320<<20), "dst")
	data := noise(3<<20+5, 34)
	writeFile(t, src, data)
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != "io_uring" || rep.FallbackReason != "" {
		t.Errorf("engine %q (%q); want io_uring", rep.Engine, rep.FallbackReason)
	}
	compareFile(t, dst, data)
}
