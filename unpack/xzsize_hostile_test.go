package unpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"
)

// xzFooter is an xz stream footer (CRC32 check) whose backward size says
// the index takes (words+1)*4 bytes: 0xFFFFFFFF words claim 16 GiB.
func xzFooter(words uint32) []byte {
	f := make([]byte, xzFooterSize)
	binary.LittleEndian.PutUint32(f[4:8], words)
	f[8], f[9] = 0, 1
	binary.LittleEndian.PutUint32(f[:4], crc32.ChecksumIEEE(f[4:10]))
	f[10], f[11] = 'Y', 'Z'
	return f
}

// tailAt is a file of size bytes that are zeros but for tail at its end,
// as a server may claim of any object: nothing is stored. Reads larger
// than most fail, so that a reader that believes a hostile footer fails
// rather than fill gigabytes.
type tailAt struct {
	size int64
	tail []byte
	most int
}

func (t *tailAt) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > t.most {
		return 0, fmt.Errorf("asked for %d bytes in one read", len(p))
	}
	clear(p)
	start := t.size - int64(len(t.tail))
	for i := range p {
		if at := off + int64(i); at >= start && at < t.size {
			p[i] = t.tail[at-start]
		}
	}
	return len(p), nil
}

// TestXzSizeHostileIndex: a footer that claims an index of 16 GiB at the
// end of an object claimed to be 20 GiB, or one of 8 MiB at the end of a
// file of 10 MiB (more than half of it: no valid index is), is refused
// with IndexTooLargeError before anything is allocated for it. Before,
// the sizing allocated what the footer said.
func TestXzSizeHostileIndex(t *testing.T) {
	for _, c := range []struct {
		size  int64
		words uint32
	}{
		{20 << 30, 0xFFFFFFFF},
		{10 << 20, 2<<20 - 1},
	} {
		t.Run(fmt.Sprintf("%d/%d", c.size, c.words), func(t *testing.T) {
			r := &tailAt{size: c.size, tail: xzFooter(c.words), most: 256 << 20}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := XzSize(r, r.size)
			runtime.ReadMemStats(&after)
			var big *IndexTooLargeError
			if !errors.As(err, &big) {
				t.Fatalf("XzSize: %v; want an IndexTooLargeError", err)
			}
			if want := (int64(c.words) + 1) * 4; big.Size != want || big.Most > xzIndexCap {
				t.Errorf("%+v: want Size %d, Most at most %d", big, want, xzIndexCap)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("XzSize allocated %d bytes", grew)
			}
			t.Log(err)
		})
	}
}

// TestXzIndexMost: the cap follows the file up to xzIndexCap, and leaves
// room for an index's fixed part in the smallest file.
func TestXzIndexMost(t *testing.T) {
	for _, c := range []struct{ end, want int64 }{
		{32, xzIndexFloor + 16},
		{10 << 20, 5<<20 + xzIndexFloor},
		{1 << 40, xzIndexCap},
	} {
		if got := xzIndexMost(c.end); got != c.want {
			t.Errorf("xzIndexMost(%d) = %d, want %d", c.end, got, c.want)
		}
	}
}

// TestXzIndexLongerThanItsBlocks: an index that lists more records than
// the stream decoded fails at the first extra record.
func TestXzIndexLongerThanItsBlocks(t *testing.T) {
	// count 3, then records (unpadded 12, uncompressed 1) forever.
	index := []byte{3}
	for i := 0; i < 3; i++ {
		index = append(index, 12, 1)
	}
	sum := crc32.ChecksumIEEE(append([]byte{0}, index...))
	index = binary.LittleEndian.AppendUint32(index, sum)
	blocks := []xzRecord{{12, 1}}
	_, err := readXzIndex(bytes.NewReader(index), blocks)
	if err == nil {
		t.Fatal("an index of 3 records read against 1 block")
	}
	t.Log(err)
}
