package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
)

// TestSparseCopyFitsDespiteFailedReservation: a new DST is reserved a
// window ahead of the writes; on a file system too small for the window
// the fallocate fails with ENOSPC, but ext4 keeps the blocks it got
// before it failed. A SRC whose data fits, and whose zero runs (written
// zeros, data to SEEK_DATA) do not, must still be copied: the zero runs
// in those blocks are given back, not left allocated (a 300 MiB SRC of
// 200 MiB data failed with ENOSPC on an ext4 with 205 MiB free).
func TestSparseCopyFitsDespiteFailedReservation(t *testing.T) {
	dev, _ := loopWith(t, 128<<20, false)
	blocktest.Mkfs(t, dev, "ext4", "-E", "lazy_itable_init=0,lazy_journal_init=0")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	free := freeBytes(t, mnt)
	// 2 MiB of data then 1 MiB of zeros, with data up to 94% of the room:
	// the whole is half as large again as the room.
	src := filepath.Join(t.TempDir(), "src")
	data := filepath.Join(t.TempDir(), "data")
	randomFile(t, data, 2<<20, 9)
	chunk, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(0); n+2<<20 <= free*94/100; n += 2 << 20 {
		chunk[0]++ // no two data runs alike
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"uring", "pool"} {
		dst := filepath.Join(mnt, "dst-"+engine)
		cli(t, "--engine", engine, src, dst).want(t, exitOK)
		if digest(t, dst) != digest(t, src) {
			t.Errorf("%s: DST does not hold SRC", engine)
		}
		os.Remove(dst)
	}
}
