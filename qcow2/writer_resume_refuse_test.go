package qcow2

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// stoppedImage writes the first half of 4 MiB of data through a
// checkpointing Writer, checkpoints, and leaves the image as a kill
// would; it returns the file's bytes and the options.
func stoppedImage(t *testing.T, path string) ([]byte, WriterOptions) {
	t.Helper()
	src := sourceRaw(t, path+".src", 4<<20, 5)
	opt := WriterOptions{Size: int64(len(src)), ClusterSize: 4096, Checkpoints: true}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := Create(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(src[:2<<20], 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, opt
}

// l2Entries finds the file offsets of the first L2 table's entries that
// map data below 1 MiB, and the L1 table's offset.
func l2Entries(t *testing.T, b []byte) (data []int64, l1 int64) {
	t.Helper()
	be := binary.BigEndian
	l1 = int64(be.Uint64(b[40:]))
	l2 := int64(be.Uint64(b[l1:]) & entryOffsetMask)
	for k := int64(0); k < 256; k++ { // guest clusters below 1 MiB, where Resume keeps them
		if e := be.Uint64(b[l2+8*k:]); e&entryOffsetMask != 0 && e&entryCompressed == 0 {
			data = append(data, l2+8*k)
		}
	}
	if len(data) < 2 {
		t.Fatal("the image maps too little data to damage")
	}
	return data, l1
}

// TestResumeRefuses: an image that is not what a checkpointing Writer
// with these options leaves (other options, a header or table changed
// by hand) is refused with ErrNotResumable, and the untouched image is
// taken up.
func TestResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "img.qcow2")
	orig, opt := stoppedImage(t, img)
	data, l1 := l2Entries(t, orig)
	be := binary.BigEndian
	put := func(b []byte, off int64, v uint64) { be.PutUint64(b[off:], v) }
	entry := func(b []byte, off int64) uint64 { return be.Uint64(b[off:]) }
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		opt    func(o *WriterOptions)
	}{
		{"cluster size", nil, func(o *WriterOptions) { o.ClusterSize = 8192 }},
		{"compression", nil, func(o *WriterOptions) { o.Compression = CompressZstd }},
		{"size", nil, func(o *WriterOptions) { o.Size += 4096 }},
		{"dirty bit", func(b []byte) []byte { b[79] |= 1; return b }, nil},
		{"no magic", func(b []byte) []byte { b[0] = 0; return b }, nil},
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }, nil},
		{"two entries, one cluster", func(b []byte) []byte { put(b, data[1], entry(b, data[0])); return b }, nil},
		{"data over the L1 table", func(b []byte) []byte { put(b, data[0], uint64(l1)|entryCopied); return b }, nil},
		{"data over the header", func(b []byte) []byte { put(b, data[0], entryCopied); return b }, nil},
		{"data past the end", func(b []byte) []byte { put(b, data[0], uint64(len(b)+4096)&^4095|entryCopied); return b }, nil},
		{"unaligned", func(b []byte) []byte { put(b, data[0], entry(b, data[0])+512); return b }, nil},
		{"no copied flag", func(b []byte) []byte { put(b, data[0], entry(b, data[0])&^entryCopied); return b }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			if c.damage != nil {
				b = c.damage(b)
			}
			path := filepath.Join(t.TempDir(), "img.qcow2")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			o := opt
			if c.opt != nil {
				c.opt(&o)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = Resume(f, o, 1<<20)
			if !errors.Is(err, ErrNotResumable) {
				t.Fatalf("got %v, want ErrNotResumable", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(b) {
				t.Fatal("Resume wrote to an image it refused")
			}
		})
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := Resume(f, opt, 1<<20); err != nil {
		t.Fatalf("the untouched image: %v", err)
	}
}

// TestResumeReusesUnnamed: runs stopped after Resume and before their
// first checkpoint leave clusters nothing names; the next Resume hands
// them out again, so the file does not grow by each run's writes.
func TestResumeReusesUnnamed(t *testing.T) {
	img := filepath.Join(t.TempDir(), "img.qcow2")
	_, opt := stoppedImage(t, img)
	src, err := os.ReadFile(img + ".src")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	from := int64(1 << 20)
	start := fileSize(t, img)
	for range 6 {
		w, err := Resume(f, opt, from)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteAt(src[from:], from); err != nil {
			t.Fatal(err)
		}
		// Stopped here: no checkpoint.
	}
	if n := fileSize(t, img); n > start+2*(int64(len(src))-from) {
		t.Fatalf("the file grew to %d bytes over %d of data: what the stopped runs wrote was not reused", n, len(src))
	}
	w, err := Resume(f, opt, from)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(src[from:], from); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	needQemu(t)
	qemuCheck(t, img)
	qemuCompare(t, img+".src", "raw", img, "qcow2")
}

// TestResumeClosed: an image a checkpointing Writer finished (killed
// after Close, before the caller renamed it, with preallocated clusters
// too) is taken up like any checkpoint, and finishes as the same image.
func TestResumeClosed(t *testing.T) {
	needQemu(t)
	for _, pre := range []Prealloc{PreallocOff, PreallocMetadata} {
		dir := t.TempDir()
		img := filepath.Join(dir, "img.qcow2")
		srcPath := filepath.Join(dir, "src.raw")
		src := sourceRaw(t, srcPath, 3<<20+4097, 11)
		opt := WriterOptions{Size: int64(len(src)), Checkpoints: true, Preallocation: pre}
		f, err := os.Create(img)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := Create(f, opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writeWindows(w, src, 0, 1); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		from := int64(2 << 20)
		if w, err = Resume(f, opt, from); err != nil {
			t.Fatalf("prealloc %d: %v", pre, err)
		}
		if _, err := writeWindows(w, src, from, 2); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		qemuCheck(t, img)
		qemuCompare(t, srcPath, "raw", img, "qcow2")
	}
}
