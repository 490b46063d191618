package copier

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blkcg"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// TestWatchDisksUnderLoop: a copy from a file onto a loop device whose
// backing file is on the same disk watches that disk as DST's too, so
// that its writes, which reach the disk as the loop's requests, are
// counted as its own there and not as others' (the good neighbour held
// such copies at 128 KiB-1 MiB in flight behind their own writes).
func TestWatchDisksUnderLoop(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	loop, backing := blocktest.Device(t, 1<<20, "--direct-io=on")
	var lst, bst unix.Stat_t
	if err := unix.Stat(loop, &lst); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(backing, &bst); err != nil {
		t.Fatal(err)
	}
	under, ok := blkcg.DiskOf(bst.Dev)
	if !ok {
		t.Skipf("%s is on no disk (tmpfs?): nothing under the loop device to watch", backing)
	}
	loopDisk, ok := blkcg.DiskOf(lst.Rdev)
	if !ok {
		t.Fatalf("%s: no disk in sysfs", loop)
	}
	src := filepath.Join(filepath.Dir(backing), "src")
	if err := os.WriteFile(src, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Plan{src: &endpoint{endFacts: endFacts{disk: under, onDisk: true}}, dst: &endpoint{endFacts: endFacts{disk: loopDisk, onDisk: true}}, BlockSize: 8 << 20}
	y := &yielder{}
	y.watchDisks(p)
	stat := func(disk uint64) string {
		d, err := sysblock.Lookup(disk)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(d.Dir, "stat")
	}
	for _, want := range []struct {
		disk     uint64
		src, dst bool
	}{{loopDisk, false, true}, {under, true, true}} {
		found, path := false, stat(want.disk)
		for _, d := range y.disks {
			if d.stat == path {
				found = true
				if d.src != want.src || d.dst != want.dst {
					t.Errorf("%s: src %v dst %v, want src %v dst %v", d.stat, d.src, d.dst, want.src, want.dst)
				}
			}
		}
		if !found {
			t.Errorf("%s not watched", path)
		}
	}
}
