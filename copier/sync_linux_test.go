package copier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// syncOnce runs a sync of src onto dst and fails the test on an error.
func syncOnce(t *testing.T, o copier.Options) copier.Report {
	t.Helper()
	o.Sync = true
	p, err := copier.Prepare(o)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.DstState != copier.DstComplete {
		t.Fatalf("DST %v, want complete", rep.DstState)
	}
	return rep
}

// TestSyncFiles: every synctest pair, both engines, direct and buffered,
// granules of 4 and 64 KiB: DST ends up SRC byte for byte, and the sync
// wrote and zeroed exactly the granules that differ.
func TestSyncFiles(t *testing.T) {
	for _, eng := range engines {
		for _, direct := range []copier.DirectMode{copier.DirectAuto, copier.DirectNever} {
			for _, g := range []int{4096, 64 << 10} {
				for _, c := range synctest.Cases(g) {
					t.Run(fmt.Sprintf("%s/%s/g=%d/%s", eng, direct, g, c.Name), func(t *testing.T) {
						o := copier.Options{Engine: eng, Direct: direct}
						o.SyncGranule = g
						o.Verify = direct == copier.DirectNever // read back against the digests taken
						syncFile(t, c, o)
					})
				}
			}
		}
	}
}

func syncFile(t *testing.T, c synctest.Case, o copier.Options) {
	dir := t.TempDir()
	o.Src, o.Dst = filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	synctest.WriteFile(t, o.Src, c.Src)
	synctest.WriteDst(t, o.Dst, c)
	rep := syncOnce(t, o)
	synctest.Same(t, o.Dst, c.Src)
	written, zeroed, granules := synctest.Expect(c, o.SyncGranule)
	// A zero run's unaligned last bytes (past the last O_DIRECT unit of
	// the range) go through the tail's buffered write, as data.
	moved := rep.Bytes + rep.BytesZeroed + rep.BytesHoles
	if moved != written+zeroed || rep.Bytes < written || rep.Bytes > written+4095 || rep.Changed.GranulesChanged != granules {
		t.Fatalf("written %d, zeroed %d+%d, granules %d: want %d, %d, %d",
			rep.Bytes, rep.BytesZeroed, rep.BytesHoles, rep.Changed.GranulesChanged, written, zeroed, granules)
	}
	if n := int64(len(c.Src)); rep.BytesRead != n || rep.Changed.BytesReadDst != n {
		t.Fatalf("read %d of SRC, %d of DST: want %d each", rep.BytesRead, rep.Changed.BytesReadDst, n)
	}
	if again := syncOnce(t, o); again.Bytes+again.BytesZeroed+again.BytesHoles != 0 || again.Changed.GranulesChanged != 0 {
		t.Fatalf("a second sync changed %d granules", again.Changed.GranulesChanged)
	}
}

// TestSyncLoopDevice: a sync onto loop devices (512 and 4096 byte
// sectors, larger than SRC): DST's first bytes end up SRC's, the rest
// keep theirs, and the device was sent about the changed granules, no
// more (its own counters).
func TestSyncLoopDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	const g = 64 << 10
	for _, eng := range engines {
		for _, sector := range []string{"512", "4096"} {
			for _, name := range []string{"random-bytes", "whole-granules", "last-partial-granule", "data-became-zeros", "holes-became-data", "shrunk"} {
				t.Run(string(eng)+"/"+sector+"/"+name, func(t *testing.T) {
					o := copier.Options{Engine: eng}
					o.SyncGranule = g
					syncLoop(t, caseNamed(t, g, name), o, sector)
				})
			}
		}
	}
}

func caseNamed(t *testing.T, g int, name string) synctest.Case {
	for _, c := range synctest.Cases(g) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no synctest case %q", name)
	return synctest.Case{}
}

func syncLoop(t *testing.T, c synctest.Case, o copier.Options, sector string) {
	const size = 4 << 20
	dev, _ := blocktest.Device(t, size, "--direct-io=on", "--sector-size", sector)
	old := synctest.Random(5, size)
	copy(old, c.Dst)
	for _, h := range c.Holes {
		clear(old[h[0]:h[1]])
	}
	writeDev(t, dev, old)
	o.Src, o.Dst = filepath.Join(t.TempDir(), "src"), dev
	synctest.WriteFile(t, o.Src, c.Src)
	// The model: DST past its old content (a shorter case) held the
	// device's old bytes, not zeros.
	c.Dst = old[:len(c.Src)]
	c.Holes = nil
	written, zeroed, _ := synctest.Expect(c, o.SyncGranule)
	before := iocount.Device(t, dev)
	syncOnce(t, o)
	got := iocount.Device(t, dev).Since(before)
	want := append(append([]byte(nil), c.Src...), old[len(c.Src):]...)
	synctest.Same(t, dev, want)
	iocount.Near(t, "bytes written to "+dev, got.WriteBytes+got.DiscardBytes, written+zeroed, 1.0, 64<<10)
}

func writeDev(t *testing.T, dev string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestSyncNBD: a sync with an NBD end (qemu-nbd serving a raw file), to
// it and from it: DST ends up SRC's bytes, and only the differing
// granules were written.
func TestSyncNBD(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd")
	const g = 64 << 10
	c := caseNamed(t, g, "random-bytes")
	written, zeroed, granules := synctest.Expect(c, g)
	for _, toNBD := range []bool{true, false} {
		t.Run(fmt.Sprint("to-nbd=", toNBD), func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			synctest.WriteFile(t, src, c.Src)
			synctest.WriteDst(t, dst, c)
			o := copier.Options{Src: src, Dst: dst}
			if toNBD {
				o.Dst = nbdtest.QemuNBD(t, nbdtest.Unix, "raw", dst).URI
			} else {
				o.Src = nbdtest.QemuNBD(t, nbdtest.Unix, "raw", src, "-r").URI
			}
			o.SyncGranule = g
			rep := syncOnce(t, o)
			want := c.Src
			if !toNBD {
				// qemu-nbd serves a raw file rounded up to whole sectors,
				// zeros past its end: that is SRC's size.
				want = append(append([]byte(nil), c.Src...), make([]byte, (512-len(c.Src)%512)%512)...)
			}
			synctest.Same(t, dst, want)
			if rep.Bytes+rep.BytesZeroed+rep.BytesHoles != written+zeroed || rep.Changed.GranulesChanged != granules {
				t.Fatalf("moved %d+%d+%d bytes, %d granules: want %d bytes, %d granules",
					rep.Bytes, rep.BytesZeroed, rep.BytesHoles, rep.Changed.GranulesChanged, written+zeroed, granules)
			}
		})
	}
}
