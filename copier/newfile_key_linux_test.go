package copier

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNewFileSame: two new DSTs are one file when their folders are one
// (by device and inode, however spelled) and their names are equal, or
// equal but for case in a folder that ignores case. (This kernel has no
// CONFIG_UNICODE, so a casefolded ext4 cannot be mounted to test the
// detection itself; vfat is not installed.)
func TestNewFileSame(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	a := newFileOf(filepath.Join(dir, "Disk.img"))
	if a.caseless {
		t.Fatalf("%s reads as a folder that ignores case", dir)
	}
	for _, tc := range []struct {
		b        newFile
		caseless bool
		want     bool
	}{
		{newFileOf(filepath.Join(dir, "link", ".", "Disk.img")), false, true},
		{newFileOf(filepath.Join(dir, "disk.img")), false, false},
		{newFileOf(filepath.Join(dir, "disk.img")), true, true},
		{newFileOf(filepath.Join(dir, "disk2.img")), true, false},
	} {
		a.caseless = tc.caseless
		if got := a.same(tc.b); got != tc.want {
			t.Errorf("%+v same as %+v (caseless %v): %v, want %v", a, tc.b, tc.caseless, got, tc.want)
		}
	}
}
