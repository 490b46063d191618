package e2e

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestDirectTailReadNearMaxOffset: XFS (and btrfs) files may be
// math.MaxInt64 bytes long. A range that ends at SRC's end there, starting
// at an aligned offset (so SRC is read with O_DIRECT), has an unaligned
// last block; its O_DIRECT read is rounded up to the alignment, so it asks
// for bytes up to 2^63, which the kernel refuses (EINVAL: pos+count
// overflows). The copy passes every check, writes its first blocks, and
// then fails with exit 1. Every input is valid and --direct never copies
// it: it must copy (or be refused before the first write).
func TestDirectTailReadNearMaxOffset(t *testing.T) {
	uringtest.NeedOn(t)
	dev, _ := blocktest.Device(t, 512<<20)
	blocktest.Mkfs(t, dev, "xfs")
	mnt := blocktest.Mount(t, dev, "xfs", 0)
	src := filepath.Join(mnt, "huge")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(math.MaxInt64); err != nil {
		f.Close()
		t.Skipf("xfs here does not take a file of 2^63-1 bytes: %v", err)
	}
	tail := bytes.Repeat([]byte("end of the world "), 300) // 5100 bytes
	if _, err := f.WriteAt(tail, math.MaxInt64-int64(len(tail))); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Close()
	const length = 8191 // from an aligned offset: 4096 whole, then an unaligned tail
	off := int64(math.MaxInt64 - length)
	want := make([]byte, length)
	copy(want[length-len(tail):], tail)
	for _, engine := range []string{"uring", "pool"} {
		dst := filepath.Join(t.TempDir(), "dst")
		r := ringcp(t, "--engine", engine, "--progress", "none", "--src-offset", fmt.Sprint(off), src, dst)
		if r.code != exitOK {
			t.Errorf("--engine %s: exit %d, want 0:\n%s", engine, r.code, r.stderr)
			continue
		}
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
			t.Errorf("--engine %s: DST is not SRC's last %d bytes (%v)", engine, length, err)
		}
	}
}
