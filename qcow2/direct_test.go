package qcow2

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// alignedBuf is n bytes whose start is a multiple of a.
func alignedBuf(n, a int) []byte {
	b := make([]byte, n+a)
	skip := (a - int(uintptr(unsafe.Pointer(&b[0])))%a) % a
	return b[skip : skip+n]
}

// TestReadDirect: with an O_DIRECT view, reads into aligned buffers at
// aligned offsets (as the engine's) and unaligned ones read the guest's
// bytes, at every cluster size, over plain and compressed clusters.
func TestReadDirect(t *testing.T) {
	needQemu(t)
	for _, s := range []shape{
		{"512", converted(3<<20+512, "-o", "cluster_size=512")},
		{"64k", converted(5<<20, "-o", "cluster_size=64k")},
		{"2M", converted(5<<20+512, "-o", "cluster_size=2M")},
		{"zlib", converted(3<<20, "-c")},
		{"edited", edited("8M", "cluster_size=4k")},
	} {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			img := s.make(t, dir)
			want := rawOf(t, img)
			d, err := os.OpenFile(img, os.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				t.Skipf("no O_DIRECT in %s: %v", filepath.Dir(img), err)
			}
			defer d.Close()
			im := openPath(t, img, Options{})
			im.SetDirect(d, 4096)
			const block = 1 << 20
			buf := alignedBuf(block, 4096)
			for off := int64(0); off < im.Size(); off += block {
				n, _ := im.ReadAt(buf, off)
				sameBytes(t, "aligned read", buf[:n], want[off:off+int64(n)])
			}
			checkRead(t, im, want) // unaligned buffers and offsets
		})
	}
}
