package qcow2

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ringcp/ringcp/internal/zeros"
)

// writeImage writes src through a Writer on path, in chunks of odd sizes
// in a random order from four goroutines, as the engine would (all-zero
// chunks through WriteZeroes).
func writeImage(t testing.TB, path string, src []byte, opt WriterOptions) *Writer {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.Size = int64(len(src))
	w, err := Create(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	type chunk struct{ off, n int64 }
	var chunks []chunk
	rng := rand.New(rand.NewSource(int64(len(src))))
	for off := int64(0); off < int64(len(src)); {
		n := min(int64(len(src))-off, int64(rng.Intn(3<<20)+1))
		chunks = append(chunks, chunk{off, n})
		off += n
	}
	rng.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	work := make(chan chunk)
	var wg sync.WaitGroup
	var failed sync.Once
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				p := src[c.off : c.off+c.n]
				var err error
				if zeros.Is(p) {
					err = w.WriteZeroes(c.off, c.n)
				} else {
					_, err = w.WriteAt(p, c.off)
				}
				if err != nil {
					failed.Do(func() { t.Errorf("write %d+%d: %v", c.off, c.n, err) })
				}
			}
		}()
	}
	for _, c := range chunks {
		work <- c
	}
	close(work)
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return w
}

// qemuCheck: qemu-img check finds the image clean (no errors, no leaks).
func qemuCheck(t testing.TB, img string) {
	t.Helper()
	out, err := exec.Command("qemu-img", "check", img).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No errors were found") {
		t.Fatalf("qemu-img check %s: %v\n%s", img, err, out)
	}
}

// qemuCompare: qemu-img compare finds a and b identical.
func qemuCompare(t testing.TB, a, afmt, b, bfmt string) {
	t.Helper()
	if out, err := exec.Command("qemu-img", "compare", "-f", afmt, "-F", bfmt, a, b).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img compare %s %s: %v\n%s", a, b, err, out)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestWriter: images written from mixed sources at every cluster size,
// compressed or not, preallocated or not: clean to qemu-img check, the
// same as the source to qemu-img compare and to qemu-img convert -O raw,
// no larger than qemu-img convert makes, and read back by this package.
func TestWriter(t *testing.T) {
	needQemu(t)
	type tc struct {
		cs   int64
		comp Compression
		pre  Prealloc
		size int64
	}
	var cases []tc
	for _, cs := range []int64{512, 4 << 10, 64 << 10, 2 << 20} {
		for _, comp := range []Compression{CompressNone, CompressZlib, CompressZstd} {
			cases = append(cases, tc{cs: cs, comp: comp, size: 6<<20 + 4097})
		}
		cases = append(cases, tc{cs: cs, pre: PreallocMetadata, size: 3<<20 + 3})
	}
	for _, size := range []int64{0, 1, 511, 4097, 65537} {
		cases = append(cases, tc{cs: 64 << 10, size: size}, tc{cs: 512, comp: CompressZstd, size: size})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("cs=%d/%s/prealloc=%d/size=%d", c.cs, c.comp, c.pre, c.size), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			srcPath := filepath.Join(dir, "src.raw")
			src := sourceRaw(t, srcPath, c.size, c.size+c.cs)
			img := filepath.Join(dir, "new.qcow2")
			w := writeImage(t, img, src, WriterOptions{ClusterSize: c.cs, Compression: c.comp, Preallocation: c.pre})
			qemuCheck(t, img)
			qemuCompare(t, srcPath, "raw", img, "qcow2")
			padded := append(append([]byte(nil), src...), make([]byte, w.Size()-int64(len(src)))...)
			sameBytes(t, "qemu-img convert -O raw of the new image", rawOf(t, img), padded)
			im := openPath(t, img, Options{})
			checkRead(t, im, padded)
			checkMap(t, im, img, padded)

			ref := filepath.Join(dir, "qemu.qcow2")
			args := []string{"convert", "-O", "qcow2", "-o", fmt.Sprintf("cluster_size=%d", c.cs)}
			switch {
			case c.comp != CompressNone:
				args = append(args, "-c", "-o", "compression_type="+c.comp.String())
			case c.pre == PreallocMetadata:
				args = append(args, "-o", "preallocation=metadata")
			}
			qemuImg(t, append(args, srcPath, ref)...)
			if got, want := fileSize(t, img), fileSize(t, ref); got > want {
				t.Errorf("the image takes %d bytes, qemu-img convert's %d", got, want)
			}
		})
	}
}

// TestWriterBacking: a new image over a backing file holds only the
// clusters that differ; data zeroed over the backing file's data becomes
// zero clusters; the chain reads as the new source.
func TestWriterBacking(t *testing.T) {
	needQemu(t)
	for _, comp := range []Compression{CompressNone, CompressZstd} {
		t.Run(comp.String(), func(t *testing.T) {
			dir := t.TempDir()
			baseRaw := filepath.Join(dir, "base.raw")
			base := sourceRaw(t, baseRaw, 8<<20, 3)
			baseImg := filepath.Join(dir, "base.qcow2")
			qemuImg(t, "convert", "-O", "qcow2", baseRaw, baseImg)
			// The new disk: the base with a few changes, one of them
			// zeros over data, one half a cluster, and 1 MiB longer than
			// the base.
			src := append(append([]byte(nil), base...), make([]byte, 1<<20)...)
			copy(src[100<<10:], strings.Repeat("changed", 10000))
			clear(src[3<<20 : 3<<20+200<<10])
			src[5<<20+7] ^= 0xff
			copy(src[8<<20+4096:], "past the base's end")
			srcPath := filepath.Join(dir, "new.raw")
			if err := os.WriteFile(srcPath, src, 0o644); err != nil {
				t.Fatal(err)
			}
			bim := openPath(t, baseImg, Options{})
			img := filepath.Join(dir, "top.qcow2")
			writeImage(t, img, src, WriterOptions{Compression: comp, BackingFile: "base.qcow2", BackingFormat: FormatQcow2, Backing: bim})
			qemuCheck(t, img)
			qemuCompare(t, srcPath, "raw", img, "qcow2")
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := Inspect(f, InspectOptions{Options: Options{Opener: FileOpener}})
			if err != nil {
				t.Fatal(err)
			}
			// 70000 bytes over 2 clusters, 1 cluster flipped, 1 past the
			// base: at most 5 clusters of 64 KiB (the zeroed ones are
			// zero clusters, not data).
			if info.DataBytes > 5<<16 || info.DataBytes == 0 {
				t.Errorf("the overlay holds %d bytes of data; want the few changed clusters", info.DataBytes)
			}
			if info.Backing == nil || info.Backing.Format != FormatQcow2 || info.Backing.VirtualSize != 8<<20 {
				t.Errorf("backing chain: %+v, %v", info.Backing, info.BackingError)
			}
			checkRead(t, openPath(t, img, Options{}), src)
		})
	}
}

// TestWriterTrusted: with TrustWrites the caller writes only what
// differs from the backing file (here: a changed range, a zeroed range,
// and what lies past the backing file's end), and the writer stores it
// without comparing; the rest reads through.
func TestWriterTrusted(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	baseRaw := filepath.Join(dir, "base.raw")
	base := sourceRaw(t, baseRaw, 4<<20, 5)
	src := append(append([]byte(nil), base...), make([]byte, 1<<20)...)
	copy(src[70000:], strings.Repeat("trusted", 3000))
	clear(src[2<<20 : 2<<20+100000])
	copy(src[4<<20+999:], "beyond")
	srcPath := filepath.Join(dir, "new.raw")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	bf, err := os.Open(baseRaw)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	img := filepath.Join(dir, "top.qcow2")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := Create(f, WriterOptions{Size: int64(len(src)), BackingFile: "base.raw", BackingFormat: FormatRaw,
		Backing: io.NewSectionReader(bf, 0, int64(len(base))), TrustWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{70000, 70000 + 7*3000}, {4 << 20, 5 << 20}} {
		if _, err := w.WriteAt(src[r[0]:r[1]], r[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteZeroes(2<<20, 100000); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	qemuCheck(t, img)
	qemuCompare(t, srcPath, "raw", img, "qcow2")
	checkRead(t, openPath(t, img, Options{}), src)
}

// TestWriterIncomplete: an image whose writer never closed is not a
// qcow2 image (its header is zeros), and a writer that failed a write
// refuses to finish it.
func TestWriterIncomplete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.qcow2")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := Create(f, WriterOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("data"), 70000); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(f, Options{}); !isCause(err, ErrNotQcow2) {
		t.Errorf("Open before Close: %v; want ErrNotQcow2", err)
	}
	if _, err := w.WriteAt(make([]byte, 10), 1<<20-5); err == nil {
		t.Error("a write past the size succeeded")
	}
	broken := failingWriter{f}
	w2, err := Create(broken, WriterOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w2.WriteAt([]byte("data"), 0); err == nil {
		t.Fatal("a failing write succeeded")
	}
	if err := w2.Close(); err == nil {
		t.Error("Close after a failed write succeeded")
	}
	if b, _ := os.ReadFile(path); len(b) >= 4 && string(b[:4]) == "QFI\xfb" {
		t.Error("a header was written after a failed write")
	}
}

type failingWriter struct{ *os.File }

func (failingWriter) WriteAt(p []byte, off int64) (int, error) { return 0, io.ErrShortWrite }
