package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

var engines = []copier.EngineChoice{copier.EngineUring, copier.EnginePool}

// TestCopyFiles: file to new file and onto a longer existing file, every
// awkward size, both engines, direct and buffered, byte for byte.
func TestCopyFiles(t *testing.T) {
	uringtest.NeedOn(t)
	sizes := []int64{0, 1, 511, 4095, 4097, 1<<20 - 1, 64<<20 + 12345}
	for _, eng := range engines {
		for _, direct := range []copier.DirectMode{copier.DirectAuto, copier.DirectNever} {
			for _, size := range sizes {
				for _, existing := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/%d/existing=%v", eng, direct, size, existing)
					t.Run(name, func(t *testing.T) {
						copyAndCompare(t, size, existing, copier.Options{Engine: eng, Direct: direct})
					})
				}
			}
		}
	}
}

func copyAndCompare(t *testing.T, size int64, existing bool, o copier.Options) {
	dir := t.TempDir()
	o.Src, o.Dst = filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomBytes(size, uint64(size))
	writeFile(t, o.Src, data)
	if existing {
		writeFile(t, o.Dst, randomBytes(size+3<<20, 7))
	}
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	wantEngine := map[copier.EngineChoice]string{copier.EngineUring: "io_uring", copier.EnginePool: "pool"}[o.Engine]
	if rep.Bytes != size || !rep.Synced || rep.Engine != wantEngine {
		t.Fatalf("report %+v: want %d bytes, synced, engine %s", rep, size, wantEngine)
	}
	if o.Direct == copier.DirectNever && (rep.DirectSrc || rep.DirectDst) {
		t.Fatalf("--direct never, yet direct src/dst = %v/%v", rep.DirectSrc, rep.DirectDst)
	}
	if o.Direct == copier.DirectAuto && (!rep.DirectSrc || !rep.DirectDst) {
		t.Fatalf("--direct auto on ext4 should be direct on both sides: %v/%v", rep.DirectSrc, rep.DirectDst)
	}
	compareFile(t, o.Dst, data)
}

// TestRangeIntoExistingFile: with --dst-offset or --length DST keeps its
// size and every byte outside the range.
func TestRangeIntoExistingFile(t *testing.T) {
	for _, eng := range engines {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		data, old := randomBytes(1<<20, 1), randomBytes(3<<20, 2)
		writeFile(t, src, data)
		writeFile(t, dst, old)
		o := copier.Options{Src: src, Dst: dst, Engine: eng, SrcOffset: 4096, DstOffset: 1 << 20, Length: 100_001, LengthSet: true}
		if _, err := copier.Copy(context.Background(), o); err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		want := bytes.Clone(old)
		copy(want[1<<20:], data[4096:4096+100_001])
		compareFile(t, dst, want)
	}
}

// TestNewDstAppearsOnlyWhenDone: a new DST is written as an unnamed inode
// and linked at the end, so it cannot be seen half copied. A copy that is
// stopped leaves no file behind.
func TestNewDstAppearsOnlyWhenDone(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(8<<20, 3))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := copier.Copy(ctx, copier.Options{Src: src, Dst: dst})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled copy left DST behind: %v", err)
	}
}

func TestBlockSizeAndDepthAreHonoured(t *testing.T) {
	dir := t.TempDir()
	o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), BlockSize: 64 << 10, QueueDepth: 3}
	data := randomBytes(1<<20+5, 4)
	writeFile(t, o.Src, data)
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.BlockSize != 64<<10 || rep.QueueDepth != 3 {
		t.Fatalf("block size %d, depth %d: want 65536 and 3", rep.BlockSize, rep.QueueDepth)
	}
	compareFile(t, o.Dst, data)
}

func compareFile(t testing.TB, path string, want []byte) {
	t.Helper()
	enginetest.CompareFile(t, path, want)
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int64, seed uint64) []byte { return enginetest.RandomBytes(n, seed) }
