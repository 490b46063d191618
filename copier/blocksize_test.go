package copier_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestBlockSizeRounded: with Direct auto, a block size that is not a
// multiple of the O_DIRECT alignment is rounded down to one (at least one
// unit), so that O_DIRECT stays on; Direct never keeps it as given.
func TestBlockSizeRounded(t *testing.T) {
	cases := []struct {
		asked    int
		direct   copier.DirectMode
		onDirect bool
	}{
		{4_000_000, copier.DirectAuto, true}, // -b 4MB
		{1000, copier.DirectAuto, true},
		{8 << 20, copier.DirectAuto, true},
		{4_000_000, copier.DirectNever, false},
	}
	for _, c := range cases {
		dir := t.TempDir()
		data := randomBytes(9<<20+5, 8)
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		writeFile(t, src, data)
		plan, err := copier.Prepare(copier.Options{Src: src, Dst: dst, BlockSize: c.asked, Direct: c.direct})
		if err != nil {
			t.Fatal(err)
		}
		// The alignment is the filesystem's (512 or 4096 here): rounded
		// down to it, or up to one unit.
		ok := plan.BlockSize == c.asked
		if c.onDirect && c.asked%512 != 0 {
			ok = plan.BlockSize%512 == 0 && (plan.BlockSize < c.asked && c.asked-plan.BlockSize < 4096 || plan.BlockSize <= 4096)
		}
		if !ok {
			t.Errorf("block size %d, %s: planned %d", c.asked, c.direct, plan.BlockSize)
		}
		rep, err := plan.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.DirectSrc != c.onDirect || rep.DirectDst != c.onDirect {
			t.Errorf("block size %d, %s: O_DIRECT %v/%v, want %v", c.asked, c.direct, rep.DirectSrc, rep.DirectDst, c.onDirect)
		}
		compareFile(t, dst, data)
	}
}
