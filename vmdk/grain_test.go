package vmdk

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGrainStreamEnd damages one compressed grain's zlib stream at a
// time and holds ReadAt to qemu-img convert: QEMU inflates a grain with
// zlib's uncompress, which fails unless the stream ends, its Adler-32
// right, within the marker's length and the grain, so a grain whose
// check is wrong or cut, or whose stream goes on past the grain, is EIO
// there and must fail here too (a cut or damaged grain is not data to
// copy). Bytes after the stream are not looked at by either.
func TestGrainStreamEnd(t *testing.T) {
	needQemuImg(t)
	const grain = 64 << 10
	// Grains 0 and 1 and the last, cut at the disk's end, compress to a
	// sector; 2 to 4 are random, so that a marker may claim more than
	// two grains' bytes inside the file.
	size := 5*grain + 4096
	dir := t.TempDir()
	src, base := filepath.Join(dir, "src"), filepath.Join(dir, "base.vmdk")
	var b bytes.Buffer
	for b.Len() < size {
		b.WriteString("vmdk grain pattern ")
	}
	data := b.Bytes()[:size]
	rand.New(rand.NewSource(1)).Read(data[2*grain : 5*grain])
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", src, base)
	mid, last := data[grain:2*grain], data[5*grain:]
	zl := func(p []byte) []byte {
		var w bytes.Buffer
		zw := zlib.NewWriter(&w)
		zw.Write(p)
		zw.Close()
		return w.Bytes()
	}
	badCheck := func(z []byte) []byte {
		z = append([]byte(nil), z...)
		z[len(z)-1] ^= 1
		return z
	}
	noFinal := func(p []byte) []byte { // a sync flush, no final block
		var w bytes.Buffer
		zw := zlib.NewWriter(&w)
		zw.Write(p)
		zw.Flush()
		return binary.BigEndian.AppendUint32(w.Bytes(), adler32.Checksum(p))
	}
	for _, c := range []struct {
		name string
		g    int64
		z    []byte
		n    int // the marker's length, if not len(z)
	}{
		{"as written", 1, zl(mid), 0},
		{"wrong check", 1, badCheck(zl(mid)), 0},
		{"check cut by one", 1, zl(mid)[:len(zl(mid))-1], 0},
		{"no check", 1, zl(mid)[:len(zl(mid))-4], 0},
		{"one byte past the grain", 1, zl(append(mid[:grain:grain], 'x')), 0},
		{"no final block", 1, noFinal(mid), 0},
		{"junk after the stream", 1, append(zl(mid), 0xde, 0xad, 0xbe, 0xef), 0},
		{"marker length of two grains", 1, zl(mid), 2 * grain},
		{"marker length past two grains", 1, zl(mid), 2*grain + 1},
		{"last, its bytes on the disk", 5, zl(last), 0},
		{"last, a whole grain", 5, zl(append(last[:len(last):len(last)], make([]byte, grain-len(last))...)), 0},
		{"last, past the grain", 5, zl(append(last[:len(last):len(last)], make([]byte, grain-len(last)+1)...)), 0},
		{"last, wrong check", 5, badCheck(zl(last)), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "img.vmdk")
			replaceGrain(t, base, img, c.g, c.z, c.n)
			ref := filepath.Join(t.TempDir(), "ref")
			out, qerr := exec.Command("qemu-img", "convert", "-f", "vmdk", "-O", "raw", img, ref).CombinedOutput()
			im := openFile(t, img)
			got := make([]byte, size)
			_, err := im.ReadAt(got, 0)
			switch {
			case qerr != nil && err == nil:
				t.Fatalf("ReadAt succeeds, qemu-img convert fails: %v\n%s", qerr, out)
			case qerr == nil && err != nil:
				t.Fatalf("ReadAt: %v; qemu-img convert reads it", err)
			case qerr == nil:
				if want, _ := os.ReadFile(ref); !bytes.Equal(got, want) {
					t.Fatal("the guest's bytes differ from qemu-img's")
				}
			}
		})
	}
}

// replaceGrain copies the image at base to img with grain g's compressed
// data replaced by z (it must fit in the sectors the grain had), and its
// marker's length by n (len(z) if 0).
func replaceGrain(t *testing.T, base, img string, g int64, z []byte, n int) {
	t.Helper()
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := Open(file{f})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(im.entry(g)) * sector
	room := (12+int64(binary.LittleEndian.Uint32(b[at+8:]))+sector-1)/sector*sector - 12
	if int64(len(z)) > room {
		t.Fatalf("grain %d: %d bytes do not fit in its %d", g, len(z), room)
	}
	if n == 0 {
		n = len(z)
	}
	binary.LittleEndian.PutUint32(b[at+8:], uint32(n))
	copy(b[at+12:at+12+room], append(z, make([]byte, room-int64(len(z)))...))
	if err := os.WriteFile(img, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompressedByAlgorithm: QEMU inflates grains when the header's
// compression algorithm is deflate, whatever its flag for compressed
// grains says; a streamOptimized image with the flag clear read its
// markers and zlib bytes as the guest's bytes here.
func TestCompressedByAlgorithm(t *testing.T) {
	needQemuImg(t)
	dir := t.TempDir()
	src, img, ref := filepath.Join(dir, "src"), filepath.Join(dir, "img.vmdk"), filepath.Join(dir, "ref")
	source(t, src, 3<<20+1536)
	qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", src, img)
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	flags := binary.LittleEndian.Uint32(b[8:])
	if flags&flagCompressed == 0 || binary.LittleEndian.Uint16(b[77:]) != compressDeflate {
		t.Fatalf("qemu-img's header: flags %#x, algorithm %d", flags, binary.LittleEndian.Uint16(b[77:]))
	}
	binary.LittleEndian.PutUint32(b[8:], flags&^flagCompressed)
	if err := os.WriteFile(img, b, 0o644); err != nil {
		t.Fatal(err)
	}
	qemuImg(t, "convert", "-f", "vmdk", "-O", "raw", img, ref)
	want, _ := os.ReadFile(ref)
	im := openFile(t, img)
	got := make([]byte, len(want))
	if n, err := im.ReadAt(got, 0); n != len(want) || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the guest's bytes differ from qemu-img's")
	}
}

// TestUnmarkedGrainLength: a compressed image without markers (the
// algorithm deflate, the marker flag clear) has no length for a grain's
// stream: QEMU gives zlib one grain's bytes from the grain's sector, so
// a stream longer than the grain (random data, in stored blocks) fails
// there and must fail here, not read on into what follows.
func TestUnmarkedGrainLength(t *testing.T) {
	needQemuImg(t)
	const grain = 64 << 10
	for _, random := range []bool{false, true} {
		t.Run(fmt.Sprintf("random=%v", random), func(t *testing.T) {
			dir := t.TempDir()
			src, img, ref := filepath.Join(dir, "src"), filepath.Join(dir, "img.vmdk"), filepath.Join(dir, "ref")
			data := bytes.Repeat([]byte("vmdk grain pattern "), 3*grain/19+1)[:3*grain]
			if random {
				rand.New(rand.NewSource(1)).Read(data[grain : 2*grain])
			}
			if err := os.WriteFile(src, data, 0o644); err != nil {
				t.Fatal(err)
			}
			qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", src, img)
			unmark(t, img, 3)
			out, qerr := exec.Command("qemu-img", "convert", "-f", "vmdk", "-O", "raw", img, ref).CombinedOutput()
			if random != (qerr != nil) {
				t.Fatalf("qemu-img convert: %v\n%s", qerr, out)
			}
			im := openFile(t, img)
			got := make([]byte, len(data))
			_, err := im.ReadAt(got, 0)
			switch {
			case random && err == nil:
				t.Fatalf("ReadAt succeeds, qemu-img convert fails: %s", out)
			case !random && (err != nil || !bytes.Equal(got, data)):
				t.Fatalf("ReadAt: %v (the guest's bytes: %v)", err, bytes.Equal(got, data))
			}
		})
	}
}

// unmark rewrites the streamOptimized image at img without markers: the
// first grains' zlib streams moved to their markers' sectors, the marker
// flag cleared.
func unmark(t *testing.T, img string, grains int64) {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	im := openFile(t, img)
	for g := range grains {
		at := int64(im.entry(g)) * sector
		n := int64(binary.LittleEndian.Uint32(b[at+8:]))
		copy(b[at:], b[at+12:at+12+n])
		clear(b[at+n : at+n+12])
	}
	binary.LittleEndian.PutUint32(b[8:], binary.LittleEndian.Uint32(b[8:])&^flagMarkers)
	if err := os.WriteFile(img, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
