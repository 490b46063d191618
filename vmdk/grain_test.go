package vmdk

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"
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
	size := 3*grain + 4096 // the last grain is cut at the disk's end
	dir := t.TempDir()
	src, base := filepath.Join(dir, "src"), filepath.Join(dir, "base.vmdk")
	var b bytes.Buffer
	for b.Len() < size {
		b.WriteString("vmdk grain pattern ")
	}
	if err := os.WriteFile(src, b.Bytes()[:size], 0o644); err != nil {
		t.Fatal(err)
	}
	qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", src, base)
	data := b.Bytes()[:size]
	mid, last := data[grain:2*grain], data[3*grain:]
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
	}{
		{"as written", 1, zl(mid)},
		{"wrong check", 1, badCheck(zl(mid))},
		{"check cut by one", 1, zl(mid)[:len(zl(mid))-1]},
		{"no check", 1, zl(mid)[:len(zl(mid))-4]},
		{"one byte past the grain", 1, zl(append(mid[:grain:grain], 'x'))},
		{"no final block", 1, noFinal(mid)},
		{"junk after the stream", 1, append(zl(mid), 0xde, 0xad, 0xbe, 0xef)},
		{"last, its bytes on the disk", 3, zl(last)},
		{"last, a whole grain", 3, zl(append(last[:len(last):len(last)], make([]byte, grain-len(last))...))},
		{"last, past the grain", 3, zl(append(last[:len(last):len(last)], make([]byte, grain-len(last)+1)...))},
		{"last, wrong check", 3, badCheck(zl(last))},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "img.vmdk")
			replaceGrain(t, base, img, c.g, c.z)
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
// data replaced by z (it must fit in the sectors the grain had).
func replaceGrain(t *testing.T, base, img string, g int64, z []byte) {
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
	binary.LittleEndian.PutUint32(b[at+8:], uint32(len(z)))
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
