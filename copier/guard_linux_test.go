package copier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/sysblock/sysfstest"
	"golang.org/x/sys/unix"
)

func TestParseMountinfo(t *testing.T) {
	const info = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
36 22 7:3 / /mnt/with\040space rw - xfs /dev/nonexistent-node rw
37 22 0:52 / /mnt/b rw shared:7 master:2 - btrfs /dev/also-missing rw,space_cache=v2
38 22 0:53 / /run/user rw - tmpfs tmpfs rw
garbage line
`
	got := parseMountinfo(info)
	want := map[uint64]string{
		unix.Mkdev(254, 0): "mounted on / (ext4)",
		unix.Mkdev(7, 3):   "mounted on /mnt/with space (xfs)",
		unix.Mkdev(0, 52):  "mounted on /mnt/b (btrfs)",
		unix.Mkdev(0, 53):  "mounted on /run/user (tmpfs)",
	}
	for rdev, what := range want {
		if m := got.ofBlock(rdev); m != what {
			t.Errorf("device %s: %q, want %q", sysblock.Number(rdev), m, what)
		}
	}
	if m := got.ofBlock(unix.Mkdev(7, 4)); m != "" {
		t.Errorf("an unmounted device is %q", m)
	}
}

func TestParseSwaps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "swap file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	data := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" +
		strings.ReplaceAll(file, " ", `\040`) + "\tfile\t\t1024\t\t0\t\t-2\n"
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		t.Fatal(err)
	}
	if m := parseSwaps(data).ofFile(st.Dev, st.Ino); !strings.HasPrefix(m, "active swap") {
		t.Errorf("swap file: %q, want active swap", m)
	}
	if got := parseSwaps("Filename Type Size Used Priority\n"); len(got) != 0 {
		t.Errorf("header only: %v", got)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`: "/a b", `tab\011`: "tab\t", `back\134slash`: `back\slash`,
		`short\04`: `short\04`, `not\999`: `not\999`, `plain`: "plain", `end\`: `end\`,
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

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
	table := mountTable{{what: "mounted on /data (ext4)", block: true, rdev: unix.Mkdev(259, 2)}}
	disk := span{obj: object{block: true, rdev: unix.Mkdev(7, 0)}}
	got := blockBusy(table, disk, "")
	if len(got) != 2 || !anyMounted(got) {
		t.Fatalf("disk: %+v, want vdx2 mounted and vdx1 held", got)
	}
	joined := got[0].what + "; " + got[1].what
	for _, want := range []string{"/dev/vdx1 is held by dm-0", "/dev/vdx2 is mounted on /data (ext4)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%q lacks %q", joined, want)
		}
	}
	p1 := span{obj: object{block: true, rdev: unix.Mkdev(259, 1)}}
	if got := blockBusy(table, p1, ""); len(got) != 1 || got[0].mounted {
		t.Errorf("vdx1: %+v, want only held by dm-0", got)
	}
	// The disk reached from its partition: vdx2's mount does not matter.
	disk.via = viaPartition
	if got := blockBusy(table, disk, ""); len(got) != 0 {
		t.Errorf("disk below vdx1: %+v, want nothing", got)
	}
	table = append(table, mountUse{what: "mounted on /whole (xfs)", block: true, rdev: unix.Mkdev(7, 0)})
	if got := blockBusy(table, disk, ""); len(got) != 1 || !got[0].mounted {
		t.Errorf("mounted disk below vdx1: %+v, want it mounted", got)
	}
}

// TestSpanOverlaps: ranges on one object, end -1 for to the end, empty
// ranges never.
func TestSpanOverlaps(t *testing.T) {
	a, b := object{dev: 1, ino: 2}, object{block: true, rdev: 3}
	cases := []struct {
		x, y span
		want bool
	}{
		{span{obj: a, off: 0, end: 10}, span{obj: a, off: 9, end: 20}, true},
		{span{obj: a, off: 0, end: 10}, span{obj: a, off: 10, end: 20}, false},
		{span{obj: a, off: 0, end: 10}, span{obj: b, off: 0, end: 10}, false},
		{span{obj: a, off: 100, end: -1}, span{obj: a, off: 0, end: 101}, true},
		{span{obj: a, off: 100, end: -1}, span{obj: a, off: 0, end: 100}, false},
		{span{obj: a, off: 0, end: -1}, span{obj: a, off: 5, end: -1}, true},
		{span{obj: a, off: 5, end: 5}, span{obj: a, off: 0, end: -1}, false},
	}
	for _, c := range cases {
		if got := c.x.overlaps(c.y); got != c.want || c.y.overlaps(c.x) != c.want {
			t.Errorf("%+v and %+v: overlap %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
