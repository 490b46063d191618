package blocksync

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/synctest"
)

// TestDirectRead: a Direct reads aligned windows with O_DIRECT and the
// rest through the File, and both read what DST holds: the bytes of an
// odd-sized file to its end (io.EOF after them), zeros nowhere, the
// unaligned granules just written buffered (still dirty in the page
// cache when read).
func TestDirectRead(t *testing.T) {
	for _, size := range []int64{1<<20 + 4097, 1<<20 + 1, 1 << 20, 4096 + 511} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dst")
			old, src := synctest.Random(5, size), synctest.Random(6, size)
			synctest.WriteFile(t, path, old)
			f, err := OpenTarget(path, TargetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d := NewDirect(f)
			defer d.Release()
			want := append([]byte(nil), old...)
			for _, w := range [][2]int64{{4096 + 100, 411}, {size - 1, 1}} { // buffered, left dirty
				if _, err := d.WriteAt(src[w[0]:w[0]+w[1]], w[0]); err != nil {
					t.Fatal(err)
				}
				copy(want[w[0]:], src[w[0]:w[0]+w[1]])
			}
			bufs, err := align.AllocBuffers(1, 1<<20)
			if err != nil {
				t.Skipf("no aligned buffers: %v", err)
			}
			defer bufs.Free()
			got := make([]byte, 0, size)
			for off := int64(0); off < size; off += 1 << 20 {
				n, err := d.ReadAt(bufs.Slots[0], off)
				if (err != nil || n < len(bufs.Slots[0])) && !(err == io.EOF && off+int64(n) == size) {
					t.Fatalf("read at %d: %d bytes, %v", off, n, err)
				}
				got = append(got, bufs.Slots[0][:n]...)
			}
			synctest.SameBytes(t, "read with O_DIRECT", got, want)
			if d.DirectReadBytes < size/4096*4096-(1<<20) || d.DirectReadBytes > size {
				t.Errorf("%d bytes read with O_DIRECT of %d", d.DirectReadBytes, size)
			}
			// Unaligned memory or offsets go through the File.
			before := d.DirectReadBytes
			p := make([]byte, min(8192, size-4096)+1)[1:]
			if n, err := d.ReadAt(p, 4096); n != len(p) || err != nil {
				t.Fatalf("unaligned read: %d, %v", n, err)
			}
			synctest.SameBytes(t, "unaligned read", p, want[4096:4096+len(p)])
			if d.DirectReadBytes != before {
				t.Errorf("an unaligned buffer was read with O_DIRECT")
			}
		})
	}
}
