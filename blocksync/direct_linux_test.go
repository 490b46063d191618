package blocksync

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/synctest"
)

// directWrites writes SRC's granules at awkward places through a Direct
// over dst and returns what DST must hold.
func directWrites(t *testing.T, d *Direct, old, src []byte) []byte {
	t.Helper()
	want := append([]byte(nil), old...)
	size := int64(len(old))
	for _, w := range [][2]int64{{0, 4096}, {64 << 10, 64 << 10}, {4096 * 5, 511}, {size - 4097, 4097}, {size - 1, 1}} {
		off, n := w[0], w[1]
		if _, err := d.WriteAt(src[off:off+n], off); err != nil {
			t.Fatal(err)
		}
		copy(want[off:], src[off:off+n])
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestDirectFile: a Direct over a file on this host's ext4 writes the
// aligned granules with O_DIRECT and the unaligned ones buffered, and
// DST ends byte for byte as written; DropCache then reads the same.
func TestDirectFile(t *testing.T) {
	const size = 1<<20 + 4097
	path := filepath.Join(t.TempDir(), "dst")
	old, src := synctest.Random(1, size), synctest.Random(2, size)
	synctest.WriteFile(t, path, old)
	f, err := OpenTarget(path, TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDirect(f)
	defer d.Release()
	want := directWrites(t, d, old, src)
	if !d.Direct() || d.DirectBytes != 4096+64<<10 || d.BufferedBytes != 511+4097+1 {
		t.Fatalf("direct %v: %d bytes with O_DIRECT, %d buffered; want %d and %d", d.Direct(), d.DirectBytes, d.BufferedBytes, 4096+64<<10, 511+4097+1)
	}
	if err := d.DropCache(); err != nil {
		t.Fatal(err)
	}
	synctest.Same(t, path, want)
}

// TestDirectDevice: the same on a loop device of 4096-byte sectors: the
// aligned writes reach it with O_DIRECT (its own counters see them
// without a page-cache writeback), the rest buffered, and it reads back
// as written.
func TestDirectDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	const size = 4 << 20
	dev, _ := devDevice(t, size, "--direct-io=on", "--sector-size", "4096")
	old, src := synctest.Random(3, size), synctest.Random(4, size)
	writeDevice(t, dev, old)
	f, err := OpenTarget(dev, TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDirect(f)
	defer d.Release()
	before := iocount.Device(t, dev)
	want := directWrites(t, d, old, src)
	got := iocount.Device(t, dev).Since(before)
	if d.DirectBytes != 4096+64<<10 {
		t.Fatalf("%d bytes with O_DIRECT, want %d", d.DirectBytes, 4096+64<<10)
	}
	// The direct writes, and the buffered ones' pages (three of 4 KiB at
	// most, the odd ones sharing the last).
	iocount.Near(t, "bytes written", got.WriteBytes, 4096+64<<10+3*4096, 1.0, 8192)
	if err := d.DropCache(); err != nil {
		t.Fatal(err)
	}
	if b := readDevice(t, dev); string(b) != string(want) {
		t.Fatal("the device does not hold what was written")
	}
}
