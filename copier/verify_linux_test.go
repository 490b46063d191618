package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// verifySizes straddle the 4 MiB cells: empty, tiny, one short of a cell,
// one past, and several cells with an odd tail.
var verifySizes = []int64{0, 1, 4097, copier.CellSize - 1, copier.CellSize + 1, 3*copier.CellSize + 12345}

// TestVerifyCopies: a verified copy of every awkward size, new and
// existing DST, direct and buffered, both engines, passes and is exact.
func TestVerifyCopies(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, direct := range []copier.DirectMode{copier.DirectAuto, copier.DirectNever} {
			for _, size := range verifySizes {
				for _, existing := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/%d/existing=%v", eng, direct, size, existing), func(t *testing.T) {
						rep := copyAndCompareRep(t, size, existing, copier.Options{Engine: eng, Direct: direct, Verify: true})
						checkVerified(t, rep, size)
					})
				}
			}
		}
	}
}

// copyAndCompareRep is copyAndCompare returning the report.
func copyAndCompareRep(t *testing.T, size int64, existing bool, o copier.Options) copier.Report {
	t.Helper()
	dir := t.TempDir()
	o.Src, o.Dst = filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomBytes(size, uint64(size)+77)
	writeFile(t, o.Src, data)
	if existing {
		writeFile(t, o.Dst, randomBytes(size+3<<20, 7))
	}
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	compareFile(t, o.Dst, data)
	return rep
}

func checkVerified(t *testing.T, rep copier.Report, size int64) {
	t.Helper()
	v := rep.Verify
	if v == nil || v.Bytes != size || v.BadBlocks != 0 || v.FirstBad != -1 || rep.DstState != copier.DstComplete {
		t.Fatalf("verify report %+v (DST %v): want %d bytes checked, none bad", v, rep.DstState, size)
	}
	if (v.How == "O_DIRECT") != rep.DirectDst {
		t.Errorf("verify read DST %q, the copy wrote it with O_DIRECT %v", v.How, rep.DirectDst)
	}
}

// TestVerifySparse: holes and zero runs in SRC become holes in DST, which
// the read-back checks as zeros without reading them.
func TestVerifySparse(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/%d", eng, seed), func(t *testing.T) {
				dir := t.TempDir()
				src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
				want := enginetest.MakeSparse(t, src, []enginetest.Piece{enginetest.DataPiece(5<<20 + 17), enginetest.HolePiece(9 << 20),
					enginetest.ZerosPiece(6 << 20), enginetest.DataPiece(1 << 20), enginetest.HolePiece(int64(seed) << 20)}, seed)
				rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng, Verify: true})
				if err != nil {
					t.Fatal(err)
				}
				compareFile(t, dst, want)
				checkVerified(t, rep, int64(len(want)))
			})
		}
	}
}

// TestVerifyDevices: a verified copy onto a loop device, a range inside
// it, both engines.
func TestVerifyDevices(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, sector := range []int{512, 4096} {
			t.Run(fmt.Sprintf("%s/sector=%d", eng, sector), func(t *testing.T) {
				const size = 13<<20 + 8192
				dev, _ := blocktest.Device(t, 32<<20, "--direct-io=on", "--sector-size", strconv.Itoa(sector))
				src := filepath.Join(t.TempDir(), "image")
				data := randomBytes(size, uint64(sector))
				writeFile(t, src, data)
				o := copier.Options{Src: src, Dst: dev, Engine: eng, Verify: true, DstOffset: 1 << 20}
				rep, err := copier.Copy(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				checkVerified(t, rep, size)
				if got := readAt(t, dev, 1<<20, size); string(got) != string(data) {
					t.Fatal("the device does not hold the copy")
				}
			})
		}
	}
}

// corruption is one silent corruption of DST, and what verification must
// then say.
type corruption struct {
	direct copier.DirectMode
	at     []int64 // offsets in DST whose byte is stored inverted
}

// TestVerifyFindsCorruption copies onto a FUSE filesystem that stores a
// byte of DST inverted and says the write succeeded. The page cache holds
// what ringcp wrote, so only a read from the server finds it: with
// O_DIRECT, and buffered after the range was dropped from the cache
// (--direct never). The copy ends with a *MismatchError naming the first
// bad byte and the bad 4 MiB blocks; a new DST never gets its name, an
// existing one is reported as not to be used.
func TestVerifyFindsCorruption(t *testing.T) {
	needRootFUSE(t)
	const size = 3*copier.CellSize + 4097
	cases := []corruption{
		{copier.DirectAuto, []int64{5000}},
		{copier.DirectNever, []int64{5000}},
		{copier.DirectAuto, []int64{2*copier.CellSize + 7, copier.CellSize + 1}},
		{copier.DirectNever, []int64{size - 3}}, // in the unaligned tail
		{copier.DirectAuto, []int64{size - 3, copier.CellSize - 1, copier.CellSize - 2}},
	}
	for _, c := range cases {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v/existing=%v", c.direct, c.at, existing), func(t *testing.T) {
				corruptCase(t, c, size, existing)
			})
		}
	}
}

func corruptCase(t *testing.T, c corruption, size int64, existing bool) {
	back := t.TempDir()
	data := randomBytes(size, 31)
	writeFile(t, filepath.Join(back, "src"), data)
	name := "dst"
	if existing {
		writeFile(t, filepath.Join(back, "dst"), randomBytes(1<<20, 9))
	} else {
		name = ".dst.ringcp-tmp" // FUSE has no O_TMPFILE: a new DST is written under its temporary name
	}
	var faults []faultfs.Fault
	for _, at := range c.at {
		faults = append(faults, faultfs.Fault{Op: faultfs.OpCorrupt, Offset: at, Name: name})
	}
	fs := faultfs.MountWith(t, back, faultfs.Options{Faults: faults})
	rep, err := copier.Copy(context.Background(), copier.Options{Src: fs.Path("src"), Dst: fs.Path("dst"), Direct: c.direct, Verify: true})
	first, blocks := c.at[0], map[int64]bool{}
	for _, at := range c.at {
		first = min(first, at)
		blocks[at/copier.CellSize] = true
	}
	var mm *copier.MismatchError
	if !errors.As(err, &mm) || mm.Offset != first || mm.BadBlocks != int64(len(blocks)) || mm.Blocks != 4 {
		t.Fatalf("err = %v; want a mismatch at %d in %d of 4 blocks", err, first, len(blocks))
	}
	if rep.Verify == nil || rep.Verify.FirstBad != first || rep.Verify.BadBlocks != int64(len(blocks)) {
		t.Errorf("verify report %+v: want first bad %d, %d blocks", rep.Verify, first, len(blocks))
	}
	want := copier.DstMismatch
	if !existing {
		want = copier.DstDiscarded
		mustNotExist(t, filepath.Join(back, "dst"))
	}
	if rep.DstState != want {
		t.Errorf("DST state %v, want %v", rep.DstState, want)
	}
	if len(fs.Hits()) == 0 {
		t.Error("the corruption never fired")
	}
}

func readAt(t *testing.T, path string, off, n int64) []byte {
	t.Helper()
	f, err := openRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

func openRead(path string) (*os.File, error) { return os.Open(path) }

// TestVerifyFindsCorruptionOnDevice: the same silent corruption under a
// loop device (its backing file on the corrupting FUSE filesystem, read
// and written with O_DIRECT), so that io_uring copies and reads back too.
func TestVerifyFindsCorruptionOnDevice(t *testing.T) {
	needRootFUSE(t)
	blocktest.NeedTool(t, "losetup")
	uringtest.NeedOn(t)
	const size, at = 9<<20 + 4096, 6<<20 + 123
	back := t.TempDir()
	data := randomBytes(size, 32)
	writeFile(t, filepath.Join(back, "src"), data)
	writeFile(t, filepath.Join(back, "disk"), make([]byte, 16<<20))
	fs := faultfs.MountWith(t, back, faultfs.Options{Faults: []faultfs.Fault{{Op: faultfs.OpCorrupt, Offset: at, Name: "disk"}}})
	dev := blocktest.Loop(t, fs.Path("disk"), "--direct-io=on")
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			rep, err := copier.Copy(context.Background(), copier.Options{Src: filepath.Join(back, "src"), Dst: dev, Engine: eng, Verify: true})
			var mm *copier.MismatchError
			if !errors.As(err, &mm) || mm.Offset != at || mm.BadBlocks != 1 || mm.Path != dev {
				t.Fatalf("err = %v; want a mismatch of %s at %d in one block", err, dev, at)
			}
			if rep.DstState != copier.DstMismatch || rep.Engine != map[copier.EngineChoice]string{copier.EngineUring: "io_uring", copier.EnginePool: "pool"}[eng] {
				t.Errorf("DST %v, engine %s", rep.DstState, rep.Engine)
			}
		})
	}
}
