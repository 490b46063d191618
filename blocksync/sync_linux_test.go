package blocksync

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/synctest"
)

// Every pair of synctest.Cases, as files: DST ends byte for byte equal
// to SRC, and the sync wrote and zeroed exactly the granules that
// differ, no more, compared by bytes and by each digest, with small
// windows so that many are in flight.
func TestSyncFiles(t *testing.T) {
	for _, g := range []int{64 << 10, 4096} {
		for i, c := range synctest.Cases(g) {
			digest := []Algorithm{0, BLAKE2b256, SHA256}[i%3]
			t.Run(fmt.Sprintf("%dK/%s/%v", g>>10, c.Name, digest), func(t *testing.T) {
				dir := t.TempDir()
				srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
				synctest.WriteFile(t, srcPath, c.Src)
				synctest.WriteDst(t, dstPath, c)
				before := iocount.Allocated(t, dstPath)
				st := syncPaths(t, srcPath, dstPath, Options{Granule: g, Window: 3 * g, Workers: 3, Digest: digest})
				synctest.Same(t, dstPath, c.Src)
				checkStats(t, st, c, g)
				// Zeroed granules are punched: DST's allocation shrinks by
				// them (but for the partial blocks at their edges), and
				// grows by no more than what was written.
				after := iocount.Allocated(t, dstPath)
				if grown := after - before; grown > st.Written+4096 || (st.Zeroed > 2*4096 && st.Written == 0 && -grown < st.Zeroed-2*4096) {
					t.Errorf("allocation %d -> %d with %d written and %d zeroed", before, after, st.Written, st.Zeroed)
				}
			})
		}
	}
}

// syncPaths opens both ends as the command would and syncs them.
func syncPaths(t *testing.T, srcPath, dstPath string, opt Options) Stats {
	t.Helper()
	src, err := OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := OpenTarget(dstPath, TargetOptions{Src: src})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	st, err := Sync(context.Background(), src, dst, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkStats compares a sync's Stats with the model's count.
func checkStats(t *testing.T, st Stats, c synctest.Case, g int) {
	t.Helper()
	written, zeroed, granules := synctest.Expect(c, g)
	want := Stats{Size: int64(len(c.Src)), OldSize: int64(len(c.Dst)), SrcRead: int64(len(c.Src)),
		DstRead: min(int64(len(c.Src)), int64(len(c.Dst))), Written: written, Zeroed: zeroed,
		Granules: Granules(int64(len(c.Src)), g), Changed: granules}
	if st != want {
		t.Errorf("stats\n got %+v\nwant %+v", st, want)
	}
}

// A file DST on a file system of its own on a loop device: what the
// device is sent is the data written, plus the file system's metadata
// and journal, not the whole file.
func TestSyncFileBytesWritten(t *testing.T) {
	dir, dev := iocount.OnLoop(t, 256<<20, "ext4")
	const g = 64 << 10
	for _, c := range synctest.Cases(g) {
		if len(c.Src) < 10*g {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			srcPath := filepath.Join(t.TempDir(), "src")
			dstPath := filepath.Join(dir, "dst")
			synctest.WriteFile(t, srcPath, c.Src)
			synctest.WriteDst(t, dstPath, c)
			iocount.Settle(t, dstPath)
			before := iocount.Device(t, dev)
			st := syncPaths(t, srcPath, dstPath, Options{})
			got := iocount.Device(t, dev).Since(before)
			synctest.Same(t, dstPath, c.Src)
			// Data: each run rounded out to the file system's 4 KiB
			// blocks; the journal's commit of the changed metadata
			// (inode, extent tree, bitmaps) stays under 64 KiB.
			iocount.Near(t, "bytes written to the device", got.WriteBytes, roundUp(st.Written, 4096), 1.0, 64<<10)
		})
	}
}

// A loop device DST keeps its size: SRC's bytes land at its start, the
// rest stays as it was, and the device is sent exactly the granules that
// differ (each rounded out to the 4 KiB pages the kernel writes back),
// counted by the device itself; with 512-byte and 4 KiB sectors (where
// an odd tail cannot be punched and is written).
func TestSyncLoopDevice(t *testing.T) {
	const g, devSize = 64 << 10, 4 << 20
	for _, sector := range []string{"512", "4096"} {
		dev, _ := devDevice(t, devSize, "--sector-size", sector)
		for _, c := range synctest.Cases(g) {
			if len(c.Src) > devSize || len(c.Dst) > devSize {
				continue
			}
			t.Run(sector+"/"+c.Name, func(t *testing.T) { syncLoop(t, dev, c, g, devSize) })
		}
	}
}

func syncLoop(t *testing.T, dev string, c synctest.Case, g int, devSize int64) {
	old := make([]byte, devSize)
	copy(old, c.Dst)
	writeDevice(t, dev, old)
	srcPath := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, srcPath, c.Src)
	before := iocount.Device(t, dev)
	st := syncPaths(t, srcPath, dev, Options{Granule: g, Window: 2 * g})
	got := iocount.Device(t, dev).Since(before)
	want := append(append([]byte{}, c.Src...), old[len(c.Src):]...)
	synctest.SameBytes(t, dev, readDevice(t, dev), want)
	dc := c
	dc.Dst = old // the device reads its old bytes, not zeros, past c.Dst
	written, zeroed, _ := synctest.Expect(dc, g)
	if st.Written != written || st.Zeroed != zeroed || st.Size != int64(len(c.Src)) || st.OldSize != devSize {
		t.Errorf("stats %+v, want %d written and %d zeroed", st, written, zeroed)
	}
	iocount.Near(t, "bytes written to the device", got.WriteBytes+got.DiscardBytes, roundUp(written, 4096)+roundUp(zeroed, 4096), 1.0, 0)
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
