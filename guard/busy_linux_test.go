package guard

import (
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock/sysfstest"
	"golang.org/x/sys/unix"
)

// fakeSys builds a sysfs with disk "vdx" (7:0) holding partition vdx1
// (259:1, starting at sector 2048, held by dm-0) and vdx2 (259:2), and
// points the package at it for the test.
func fakeSys(t *testing.T) {
	sysfstest.Build(t, sysfstest.Disk{Name: "vdx", Dev: "7:0", Parts: []sysfstest.Part{
		{Name: "vdx1", Dev: "259:1", Start: 2048, Holders: []string{"dm-0"}},
		{Name: "vdx2", Dev: "259:2", Start: 4096},
	}})
}

// TestBlockBusy: a whole disk is busy through its partitions (mounted,
// held); a partition only through itself and its disk's own mount.
func TestBlockBusy(t *testing.T) {
	fakeSys(t)
	table := mountTable{{blockObject(unix.Mkdev(259, 2)), "mounted on /data (ext4)", true}}
	disk := Span{Obj: Object{Block: true, Rdev: unix.Mkdev(7, 0)}}
	got := blockBusy(table, disk, "")
	if len(got) != 2 || !anyMounted(got) {
		t.Fatalf("disk: %+v, want vdx2 mounted and vdx1 held", got)
	}
	joined := got[0].What + "; " + got[1].What
	for _, want := range []string{"/dev/vdx1 is held by dm-0", "/dev/vdx2 is mounted on /data (ext4)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%q lacks %q", joined, want)
		}
	}
	p1 := Span{Obj: Object{Block: true, Rdev: unix.Mkdev(259, 1)}}
	if got := blockBusy(table, p1, ""); len(got) != 1 || got[0].Kind == Mounted {
		t.Errorf("vdx1: %+v, want only held by dm-0", got)
	}
	// The disk reached from its partition: vdx2's mount does not matter.
	disk.via = viaPartition
	if got := blockBusy(table, disk, ""); len(got) != 0 {
		t.Errorf("disk below vdx1: %+v, want nothing", got)
	}
	table = append(table, mount{blockObject(unix.Mkdev(7, 0)), "mounted on /whole (xfs)", true})
	if got := blockBusy(table, disk, ""); len(got) != 1 || got[0].Kind != Mounted {
		t.Errorf("mounted disk below vdx1: %+v, want it mounted", got)
	}
}
