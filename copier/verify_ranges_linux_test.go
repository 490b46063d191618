package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/extents"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/synctest"
)

// TestVerifyRanges: a restricted copy with Verify compares SRC and DST
// over its ranges (awkward ones: one byte, the odd end, overlapping),
// both engines, O_DIRECT and buffered, and reports the bytes it checked:
// the ranges, widened at most to whole 4 KiB units.
func TestVerifyRanges(t *testing.T) {
	const size = 3<<20 + 4097
	list := entries(extents.Range{Off: 5, Len: 1}, extents.Range{Off: 1 << 20, Len: 300_000},
		extents.Range{Off: 1<<20 + 4096, Len: 511}, extents.Range{Off: size - 10, Len: 10})
	ranges := extents.Merge(extents.Ranges(list))
	for _, eng := range engines {
		for _, direct := range []copier.DirectMode{copier.DirectAuto, copier.DirectNever} {
			t.Run(fmt.Sprintf("%s/%s", eng, direct), func(t *testing.T) {
				dir := t.TempDir()
				src, old := synctest.Random(5, size), synctest.Random(6, size)
				o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, Direct: direct, Verify: true}
				synctest.WriteFile(t, o.Src, src)
				synctest.WriteFile(t, o.Dst, old)
				rep, err := only(t, o, list)
				if err != nil {
					t.Fatal(err)
				}
				v := rep.Verify
				if v == nil || v.BadBlocks != 0 || v.FirstBad != -1 || v.Bytes < ranges.Total() || v.Bytes > ranges.AlignOut(4096, size).Total() {
					t.Fatalf("verify report %+v: want the %d bytes of the ranges checked", v, ranges.Total())
				}
				got, _ := os.ReadFile(o.Dst)
				widened := ranges
				if direct == copier.DirectAuto {
					widened = ranges.AlignOut(4096, size)
				}
				checkOnly(t, got, src, old, ranges, widened)
			})
		}
	}
}

// TestVerifyRangesFindsCorruption: a FUSE DST that stores one byte of a
// range inverted and says the write succeeded: the restricted copy's
// verification reads it from the server, ends with a *MismatchError at
// that byte, and the report says DST mismatches. A corruption outside
// the ranges is never written, and the copy then passes.
func TestVerifyRangesFindsCorruption(t *testing.T) {
	needRootFUSE(t)
	const size = 2<<20 + 4097
	list := entries(extents.Range{Off: 64 << 10, Len: 128 << 10}, extents.Range{Off: size - 100, Len: 100})
	for _, c := range []struct {
		direct copier.DirectMode
		at     int64
		bad    bool
	}{
		{copier.DirectAuto, 64<<10 + 4099, true},
		{copier.DirectNever, size - 3, true}, // the unaligned tail
		{copier.DirectAuto, 1 << 20, false},  // outside: never written
	} {
		t.Run(fmt.Sprintf("%s/%d", c.direct, c.at), func(t *testing.T) {
			back := t.TempDir()
			writeFile(t, filepath.Join(back, "src"), randomBytes(size, 41))
			writeFile(t, filepath.Join(back, "dst"), randomBytes(size, 42))
			fs := faultfs.MountWith(t, back, faultfs.Options{Faults: []faultfs.Fault{{Op: faultfs.OpCorrupt, Offset: c.at, Name: "dst"}}})
			o := copier.Options{Src: fs.Path("src"), Dst: fs.Path("dst"), Direct: c.direct, Verify: true}
			rep, err := only(t, o, list)
			if !c.bad {
				if err != nil || rep.Verify == nil || rep.Verify.BadBlocks != 0 {
					t.Fatalf("err %v, verify %+v: want a clean pass", err, rep.Verify)
				}
				return
			}
			var mm *copier.MismatchError
			if !errors.As(err, &mm) || mm.Offset != c.at || mm.BadBlocks != 1 {
				t.Fatalf("err = %v; want a mismatch at %d in one block", err, c.at)
			}
			if rep.DstState != copier.DstMismatch || rep.Verify == nil || rep.Verify.FirstBad != c.at {
				t.Errorf("DST %v, verify %+v", rep.DstState, rep.Verify)
			}
			if len(fs.Hits()) == 0 {
				t.Error("the corruption never fired")
			}
		})
	}
}

// TestSyncVerifyFindsCorruption: a sync with Verify reads the whole of
// DST back: a FUSE DST that stores a byte of a granule the sync wrote
// inverted ends the sync with a *MismatchError at that byte, and one
// that corrupts a granule the sync did not write is never hit.
func TestSyncVerifyFindsCorruption(t *testing.T) {
	needRootFUSE(t)
	const size = 3<<20 + 4097
	const changed = 1<<20 + 64<<10 // the granule that differs (of 64 KiB: the corruptions lie inside it)
	for _, c := range []struct {
		direct copier.DirectMode
		at     int64
		bad    bool
	}{
		{copier.DirectAuto, changed + 7, true},
		{copier.DirectNever, changed + 4096, true},
		{copier.DirectAuto, 2 << 20, false}, // a granule left alone: never written
	} {
		t.Run(fmt.Sprintf("%s/%d", c.direct, c.at), func(t *testing.T) {
			back := t.TempDir()
			src := randomBytes(size, 51)
			old := append([]byte(nil), src...)
			old[changed+100] ^= 1
			writeFile(t, filepath.Join(back, "src"), src)
			writeFile(t, filepath.Join(back, "dst"), old)
			fs := faultfs.MountWith(t, back, faultfs.Options{Faults: []faultfs.Fault{{Op: faultfs.OpCorrupt, Offset: c.at, Name: "dst"}}})
			rep, err := copier.Copy(context.Background(), copier.Options{Src: fs.Path("src"), Dst: fs.Path("dst"), Direct: c.direct, Verify: true, Sync: true, SyncGranule: 64 << 10})
			if !c.bad {
				if err != nil || rep.Verify == nil || rep.Verify.BadBlocks != 0 || rep.Changed == nil || rep.Changed.GranulesChanged != 1 {
					t.Fatalf("err %v, verify %+v, changed %+v: want a clean sync of one granule", err, rep.Verify, rep.Changed)
				}
				return
			}
			var mm *copier.MismatchError
			if !errors.As(err, &mm) || mm.Offset != c.at {
				t.Fatalf("err = %v; want a mismatch at %d", err, c.at)
			}
			if rep.DstState != copier.DstMismatch {
				t.Errorf("DST %v, want mismatch", rep.DstState)
			}
		})
	}
}
