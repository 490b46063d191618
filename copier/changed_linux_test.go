package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/extents"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// only runs a copy restricted to entries.
func only(t *testing.T, o copier.Options, entries []extents.Entry) (copier.Report, error) {
	t.Helper()
	o.Extents, o.ExtentsSet = entries, true
	p, err := copier.Prepare(o)
	if err != nil {
		return copier.Report{}, err
	}
	return p.Run(context.Background())
}

func entries(rs ...extents.Range) []extents.Entry {
	out := make([]extents.Entry, len(rs))
	for i, r := range rs {
		out[i] = extents.Entry{Range: r, Line: i + 1}
	}
	return out
}

// TestExtentsFiles: only the listed ranges (unsorted, overlapping, one
// byte, the odd end) reach DST, from SRC at the same offsets; DST keeps
// every other byte (buffered: exactly; O_DIRECT: outside the ranges
// widened to whole 4 KiB units) and its size.
func TestExtentsFiles(t *testing.T) {
	const size = 3<<20 + 4097
	list := entries(extents.Range{Off: 1 << 20, Len: 300_000}, extents.Range{Off: 5, Len: 1},
		extents.Range{Off: 1<<20 + 4096, Len: 8192}, extents.Range{Off: size - 10, Len: 10},
		extents.Range{Off: 2 << 20, Len: 0}, extents.Range{Off: 64 << 10, Len: 64 << 10})
	ranges := extents.Merge(extents.Ranges(list))
	for _, eng := range engines {
		for _, direct := range []copier.DirectMode{copier.DirectAuto, copier.DirectNever} {
			t.Run(fmt.Sprintf("%s/%s", eng, direct), func(t *testing.T) {
				dir := t.TempDir()
				src, old := synctest.Random(1, size), synctest.Random(2, size+5000)
				clear(src[1<<20+65536 : 1<<20+200_000]) // zeros inside a range
				o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, Direct: direct}
				synctest.WriteFile(t, o.Src, src)
				synctest.WriteFile(t, o.Dst, old)
				rep, err := only(t, o, list)
				if err != nil {
					t.Fatal(err)
				}
				if rep.DstState != copier.DstComplete || rep.Changed.Ranges != len(ranges) || rep.Changed.RangeBytes != ranges.Total() {
					t.Fatalf("report %+v", *rep.Changed)
				}
				got, _ := os.ReadFile(o.Dst)
				widened := ranges
				if direct == copier.DirectAuto {
					widened = ranges.AlignOut(4096, size)
				}
				checkOnly(t, got, src, old, ranges, widened)
				if moved := rep.Bytes + rep.BytesZeroed + rep.BytesHoles; moved < ranges.Total() || moved > widened.Total() {
					t.Fatalf("moved %d bytes, want %d to %d", moved, ranges.Total(), widened.Total())
				}
			})
		}
	}
}

// checkOnly: got is SRC in ranges, old outside widened, its size old's.
func checkOnly(t *testing.T, got, src, old []byte, ranges, widened extents.List) {
	t.Helper()
	if len(got) != len(old) {
		t.Fatalf("DST is %d bytes, want %d (its size kept)", len(got), len(old))
	}
	for i := range got {
		in := ranges.Contains(int64(i))
		switch {
		case in && got[i] != src[i]:
			t.Fatalf("byte %d in a range: %#x, SRC has %#x", i, got[i], src[i])
		case !widened.Contains(int64(i)) && got[i] != old[i]:
			t.Fatalf("byte %d outside the ranges changed: %#x, was %#x", i, got[i], old[i])
		}
	}
}

// TestExtentsRefused: a range past an end, a list on a new DST and a
// dirty bitmap on a file are refused before anything is written.
func TestExtentsRefused(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	synctest.WriteFile(t, src, synctest.Random(1, 10000))
	old := synctest.Random(2, 8192)
	synctest.WriteFile(t, dst, old)
	for _, c := range []struct {
		name, want string
		o          copier.Options
		list       []extents.Entry
	}{
		{"past-dst", "line 2", copier.Options{Src: src, Dst: dst}, entries(extents.Range{Off: 0, Len: 10}, extents.Range{Off: 8000, Len: 1000})},
		{"past-src", "past the end of SRC", copier.Options{Src: src, Dst: dst}, entries(extents.Range{Off: 9999, Len: 2})},
		{"new-dst", "does not exist", copier.Options{Src: src, Dst: dst + ".new"}, nil},
		{"offset", "offsets", copier.Options{Src: src, Dst: dst, SrcOffset: 4096}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := only(t, c.o, c.list)
			var r *copier.RefusedError
			if !errors.As(err, &r) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.want)
			}
			synctest.Same(t, dst, old)
		})
	}
	o := copier.Options{Src: src, Dst: dst}
	o.DirtyBitmap = "b0"
	if _, err := copier.Prepare(o); err == nil || !strings.Contains(err.Error(), "NBD SRC") {
		t.Fatalf("a dirty bitmap on a file SRC: %v", err)
	}
}

// TestExtentsLoopDevice: a restricted copy onto a loop device sends it
// the ranges' bytes and no more (its own counters).
func TestExtentsLoopDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	const size = 8 << 20
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dev, _ := blocktest.Device(t, size, "--direct-io=on", "--sector-size", "4096")
			old := synctest.Random(3, size)
			writeDev(t, dev, old)
			src := synctest.Random(4, size)
			o := copier.Options{Src: filepath.Join(t.TempDir(), "src"), Dst: dev, Engine: eng}
			synctest.WriteFile(t, o.Src, src)
			list := entries(extents.Range{Off: 4096, Len: 4096}, extents.Range{Off: 3 << 20, Len: 1 << 20}, extents.Range{Off: size - 8192, Len: 8192})
			ranges := extents.Merge(extents.Ranges(list))
			before := iocount.Device(t, dev)
			if _, err := only(t, o, list); err != nil {
				t.Fatal(err)
			}
			got := iocount.Device(t, dev).Since(before)
			b, _ := os.ReadFile(dev)
			checkOnly(t, b, src, old, ranges, ranges)
			iocount.Near(t, "bytes written to "+dev, got.WriteBytes, ranges.Total(), 1.0, 0)
		})
	}
}

// TestDirtyBitmap: an incremental copy. A qcow2 is copied whole, gets a
// bitmap (qemu-img bitmap --add), is changed by qemu-io at awkward
// places, and is served by qemu-nbd -B; a copy with DirtyBitmap brings
// the earlier copy to the image's new content writing only the dirty
// granules. A bitmap the server does not offer is refused by name.
func TestDirtyBitmap(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	const size, g = 5<<20 + 4096*3, 64 << 10
	dir := t.TempDir()
	img, dst, want := filepath.Join(dir, "disk.qcow2"), filepath.Join(dir, "backup.raw"), filepath.Join(dir, "want.raw")
	nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", img, fmt.Sprint(size))
	qemuIO(t, img, fmt.Sprintf("write -P 0x11 0 %d", size))
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", img, dst) // the full backup
	nbdtest.QemuImg(t, "bitmap", "--add", "--enable", "-g", fmt.Sprint(g), "-f", "qcow2", img, "b0")
	writes := [][2]int64{{0, 1}, {g - 1, 2}, {5 * g, 3 * g}, {9*g + 17, 4096}, {size - 1, 1}}
	for i, w := range writes {
		qemuIO(t, img, fmt.Sprintf("write -P %d %d %d", i+0x21, w[0], w[1]))
	}
	qemuIO(t, img, fmt.Sprintf("write -z %d %d", 20*g, 2*g)) // data that became zeros
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", img, want)
	srv := nbdtest.QemuNBD(t, nbdtest.Unix, "qcow2", img, "-r", "-B", "b0")

	o := copier.Options{Src: srv.URI, Dst: dst}
	o.DirtyBitmap = "nope"
	if _, err := copier.Prepare(o); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("a bitmap the server lacks: %v, want a refusal naming it", err)
	}
	o.DirtyBitmap = "b0"
	p, err := copier.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(want)
	synctest.Same(t, dst, b)
	// Granules 0, 1 (the write across their boundary), 5-7, 9, the last,
	// and the two zeroed.
	dirty := int64(6*g) + (size - (size-1)/g*g) + 2*g
	if moved := rep.Bytes + rep.BytesZeroed + rep.BytesHoles; moved != dirty || rep.Changed.RangeBytes != dirty {
		t.Fatalf("moved %d bytes of %d in ranges, want the %d dirty", moved, rep.Changed.RangeBytes, dirty)
	}
}
