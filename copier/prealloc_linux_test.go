package copier_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// TestPreallocationDoesNotNeedRoomForZeros: an image that is mostly
// allocated zeros (SEEK_DATA calls them data) fits a small file system as a
// sparse copy. Reserving DST ahead of the writes must not fail it with
// ENOSPC: the zeros are punched as they come and never need the room.
func TestPreallocationDoesNotNeedRoomForZeros(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	small := t.TempDir()
	if err := unix.Mount("tmpfs", small, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(small, 0); err != nil {
			t.Errorf("unmount %s: %v", small, err)
		}
	})
	src := filepath.Join(t.TempDir(), "image")
	want := append(make([]byte, 16<<20), randomBytes(1<<20, 31)...)
	writeFile(t, src, want) // the zeros are written: allocated, data to SEEK_DATA
	for _, eng := range engines {
		dst := filepath.Join(small, "dst-"+string(eng))
		rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng})
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		compareFile(t, dst, want)
		if rep.Bytes != 1<<20 {
			t.Errorf("%s: %d bytes written as data, want the 1 MiB that is not zeros", eng, rep.Bytes)
		}
		if err := os.Remove(dst); err != nil {
			t.Fatal(err)
		}
	}
}
