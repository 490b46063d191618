package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// Copies into existing qcow2 images (qemu-img convert -n): qemu-img
// check finds them clean, and qemu-img compare finds them SRC's.

// existingImage makes an image of size with create options, holding old
// data, zeros and (with -c) compressed clusters where SRC has holes,
// zeros and data, so every kind of cluster is written over.
func existingImage(t testing.TB, dir string, size int64, opts string, compressed bool) string {
	t.Helper()
	img := filepath.Join(dir, "dst.qcow2")
	if compressed {
		old := filepath.Join(dir, "old.raw")
		writeFile(t, old, bytes.Repeat([]byte("old guest bytes "), int(size/16)))
		qemu(t, "qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", "-o", opts, old, img)
		return img
	}
	args := []string{"create", "-q", "-f", "qcow2"}
	if opts != "" {
		args = append(args, "-o", opts)
	}
	qemu(t, "qemu-img", append(args, img, fmt.Sprint(size))...)
	if size >= 3<<20 {
		qemuIO(t, img, "write -P 0x5a 0 2m", "write -z 2m 512k", "write -P 0x5b 2621440 4k")
	}
	return img
}

// holedSrc is a raw SRC of size bytes: data, a run of zeros and a hole.
func holedSrc(t testing.TB, dir string, size int64) string {
	src := filepath.Join(dir, "src.raw")
	b := randomBytes(size, uint64(size)+1)
	if size > 2<<20 {
		clear(b[1<<20 : 1<<20+300<<10])
	}
	writeFile(t, src, b)
	if size > 2<<20 {
		punch(t, src, 64<<10, 256<<10)
	}
	return src
}

// TestQcow2DstExisting: raw SRCs of awkward sizes into existing images
// of each shape, both backends, verified.
func TestQcow2DstExisting(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	shapes := []struct {
		name       string
		opts       string
		compressed bool
	}{
		{"64k", "", false},
		{"v2", "compat=0.10", false},
		{"512", "cluster_size=512", false},
		{"2M", "cluster_size=2M", false},
		{"zlib", "cluster_size=4k", true},
		{"zstd", "compression_type=zstd", true},
	}
	for _, size := range []int64{512, 4608, 3<<20 + 512} {
		for _, s := range shapes {
			for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
				t.Run(fmt.Sprintf("%d/%s/%s", size, s.name, eng), func(t *testing.T) {
					dir := t.TempDir()
					src := holedSrc(t, dir, size)
					dst := existingImage(t, dir, size, s.opts, s.compressed)
					if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2, Engine: eng, Verify: true}); err != nil {
						t.Fatal(err)
					}
					qemu(t, "qemu-img", "check", "-q", dst)
					qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst)
				})
			}
		}
	}
}

// TestQcow2DstExistingPad: SRC of 4097 bytes into an image of 4608: the
// guest reads SRC, then zeros, where the image held data before.
func TestQcow2DstExistingPad(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	b := randomBytes(4097, 4)
	writeFile(t, src, b)
	dst := filepath.Join(dir, "dst.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", "cluster_size=4k", dst, "4608")
	qemuIO(t, dst, "write -P 0x77 0 4608")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	got, _ := os.ReadFile(qemuRaw(t, dst, dir))
	want := append(b, make([]byte, 511)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("the guest differs at byte %d", firstDiff(got, want))
	}
}

// TestQcow2DstExistingChain: an image SRC into an existing image over a
// backing file: the guest reads SRC everywhere (SRC's holes are zero
// clusters over the backing file's data), the backing file is kept.
func TestQcow2DstExistingChain(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	src := chain(t, dir) // 4 MiB
	base := filepath.Join(dir, "other-base.raw")
	writeFile(t, base, randomBytes(4<<20, 8))
	dst := filepath.Join(dir, "dst.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", dst, "4m")
	qemuIO(t, dst, "write -P 0x12 1m 64k")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatQcow2, DstFormat: copier.FormatQcow2, Verify: true}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", src, dst)
	if info := qemu(t, "qemu-img", "info", dst); !strings.Contains(info, base) {
		t.Fatalf("the backing file is gone:\n%s", info)
	}
}

// TestQcow2DstExistingLoop: an image on a block device (as on an LV) is
// written in place, both backends.
func TestQcow2DstExistingLoop(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	blocktest.NeedRoot(t)
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			src := holedSrc(t, dir, 3<<20+512)
			img := existingImage(t, dir, 3<<20+512, "cluster_size=4k", false)
			b, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			dev, _ := blocktest.Device(t, 8<<20)
			writeFile(t, dev, b)
			if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dev, DstFormat: copier.FormatQcow2, Engine: eng, Verify: true}); err != nil {
				t.Fatal(err)
			}
			qemu(t, "qemu-img", "check", "-q", "-f", "qcow2", dev)
			qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dev)
		})
	}
}

// TestQcow2DstExistingRefusals: what cannot be written into is refused
// before any write, the image unchanged.
func TestQcow2DstExistingRefusals(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	src := holedSrc(t, dir, 1<<20)
	img := func(name, size string, opts ...string) string {
		p := filepath.Join(dir, name)
		qemu(t, "qemu-img", append(append([]string{"create", "-q", "-f", "qcow2"}, opts...), p, size)...)
		return p
	}
	snap := img("snap.qcow2", "1m")
	qemuIO(t, snap, "write -P 1 0 64k")
	qemu(t, "qemu-img", "snapshot", "-c", "s1", snap)
	raw := filepath.Join(dir, "raw")
	writeFile(t, raw, randomBytes(1<<20, 3))
	for _, c := range []struct {
		name string
		o    copier.Options
		kind copier.Kind
		want string
	}{
		{"snapshots", copier.Options{Dst: snap}, copier.KindImageFormat, "internal snapshots"},
		{"smaller", copier.Options{Dst: img("small.qcow2", "512k")}, copier.KindTooSmall, "too small"},
		{"larger", copier.Options{Dst: img("large.qcow2", "2m")}, copier.KindBadInput, "virtual size"},
		{"not an image", copier.Options{Dst: raw}, copier.KindBadInput, "not a qcow2 image"},
		{"new image options", copier.Options{Dst: img("opts.qcow2", "1m"), Qcow2: copier.Qcow2Options{ClusterSize: 4096}}, copier.KindBadInput, "keeps its own options"},
		{"resume", copier.Options{Dst: img("resume.qcow2", "1m"), Resume: true}, copier.KindNotSupported, "Resume"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Src, c.o.DstFormat = src, copier.FormatQcow2
			before, _ := os.ReadFile(c.o.Dst)
			_, err := copier.Copy(context.Background(), c.o)
			var refused *copier.RefusedError
			if !errors.As(err, &refused) || refused.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%T), want a %s refusal with %q", err, err, c.kind, c.want)
			}
			after, _ := os.ReadFile(c.o.Dst)
			if !bytes.Equal(before, after) {
				t.Fatal("DST changed")
			}
		})
	}
}

// TestQcow2DstExistingStopped: a copy into an existing image stopped
// half way leaves the image's tables as they were, so only the clusters
// overwritten in place are the guest's: the part of the range the
// report says DST holds must read (through QEMU) as SRC's, though SRC's
// hole over the image's data became a zero cluster that no table names
// yet, and SRC's bytes past its data went to new clusters.
func TestQcow2DstExistingStopped(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	const size = 8 << 20
	dir := t.TempDir()
	src := holedSrc(t, dir, size)
	dst := existingImage(t, dir, size, "", false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := copier.Copy(ctx, copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2,
		BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 4 << 20, ProgressInterval: 10 * time.Millisecond,
		OnProgress: func(s copier.Status) {
			if s.BytesDone >= 5<<20 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rep.DstState != copier.DstPartial {
		t.Fatalf("DST state %v, want partial", rep.DstState)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	got, err := os.ReadFile(qemuRaw(t, dst, dir))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(got[:rep.Contiguous], want[:rep.Contiguous]); i < int(rep.Contiguous) {
		t.Fatalf("the report says DST holds the first %d bytes of the copy, but the image reads differently from SRC at %d", rep.Contiguous, i)
	}
}
