package faultfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCorruptWrite: a write over an OpCorrupt fault succeeds whole, and
// the backing file holds the data with that one byte inverted; a write of
// another file, or one that does not cover the offset, is stored as it is.
func TestCorruptWrite(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", nil)
	writeBacking(t, back, "b", nil)
	fs := mountT(t, back, Fault{Op: OpCorrupt, Offset: faultAt, Name: "a"})
	data := pattern(1 << 20)
	for _, name := range []string{"a", "b"} {
		fd := openT(t, fs.Path(name), unix.O_WRONLY)
		n, err := unix.Pwrite(fd, data, 0)
		unix.Close(fd)
		if n != len(data) || err != nil {
			t.Fatalf("pwrite %s: %d, %v: want the whole write to succeed", name, n, err)
		}
	}
	want := bytes.Clone(data)
	want[faultAt] ^= 0xff
	if got, _ := os.ReadFile(filepath.Join(back, "a")); !bytes.Equal(got, want) {
		t.Errorf("backing a: not the data with byte %d inverted", faultAt)
	}
	if got, _ := os.ReadFile(filepath.Join(back, "b")); !bytes.Equal(got, data) {
		t.Errorf("backing b: changed, though the fault names a")
	}
	hits := fs.Hits()
	if len(hits) == 0 || hits[0].Op != OpCorrupt || hits[0].Name != "a" || hits[0].Offset > faultAt || hits[0].Offset+int64(hits[0].Len) <= faultAt {
		t.Errorf("hits %v: want corruptions of a's request over %d", hits, faultAt)
	}
	if err := (Fault{Op: OpCorrupt, Offset: 1, Errno: unix.EIO}).validate(); err == nil {
		t.Errorf("a corruption with an errno validated")
	}
}
