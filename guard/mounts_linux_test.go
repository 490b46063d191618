package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock"
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
		if m := got.of(blockObject(rdev)); m != what {
			t.Errorf("device %s: %q, want %q", sysblock.Number(rdev), m, what)
		}
	}
	if m := got.of(blockObject(unix.Mkdev(7, 4))); m != "" {
		t.Errorf("an unmounted device is %q", m)
	}
}

// TestMountinfoWriting: the superblock's options say whether a file
// system writes its device; a read-only bind mount of a read-write file
// system still does, a read-only file system never.
func TestMountinfoWriting(t *testing.T) {
	const info = `40 22 7:5 / /ro rw - ext4 /dev/x ro,relatime
41 22 7:6 / /rw rw - ext4 /dev/y rw,relatime
42 22 7:7 / /bind ro - ext4 /dev/z rw
`
	w := parseMountinfo(info).writing()
	for minor, want := range map[uint32]string{5: "", 6: "mounted on /rw (ext4)", 7: "mounted on /bind (ext4)"} {
		if got := w.of(blockObject(unix.Mkdev(7, minor))); got != want {
			t.Errorf("7:%d: %q, want %q", minor, got, want)
		}
	}
	if parseSwaps("Filename Type\n/nonexistent file 1 0 -2\n").writing() != nil {
		t.Error("a swap file that cannot be found is listed")
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
	if m := parseSwaps(data).of(ObjectOf(&st)); m != "active swap ("+file+")" {
		t.Errorf("swap file: %q, want active swap", m)
	}
	if got := parseSwaps("Filename Type Size Used Priority\n"); len(got) != 0 {
		t.Errorf("header only: %v", got)
	}
}

// TestMountTableObjects: an entry matches its object only: a device by its
// number, a swap file by device and inode, never one for the other even
// where the numbers coincide.
func TestMountTableObjects(t *testing.T) {
	n := unix.Mkdev(7, 3)
	table := mountTable{{blockObject(n), "mounted on /a (ext4)", true}, {Object{Dev: n, Ino: 12}, "active swap (/a/swap)", true}}
	for obj, want := range map[Object]string{
		blockObject(n):          "mounted on /a (ext4)",
		{Dev: n, Ino: 12}:       "active swap (/a/swap)",
		{Dev: n, Ino: 13}:       "",
		{Dev: n}:                "",
		blockObject(n + 1):      "",
		{Block: true, Rdev: 12}: "",
	} {
		if got := table.of(obj); got != want {
			t.Errorf("%+v: %q, want %q", obj, got, want)
		}
	}
}
