package unpack

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
)

// countingAt counts the reads of a ReaderAt: each is a range request
// when the xz file is an HTTP or S3 object.
type countingAt struct {
	r     io.ReaderAt
	reads atomic.Int64
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// TestXzSizePaddingReads: stream padding (zeros after a stream, any
// multiple of four, 1 MiB here, as a file written to a device in whole
// blocks has) is passed in a few reads, not one per 4-byte word: over
// HTTP each is a round trip, and 1 MiB of padding was 262,144 of them
// before the copy started. The size is still the streams'.
func TestXzSizePaddingReads(t *testing.T) {
	need(t, "xz")
	data := image(300_001, 9)
	one := compress(t, data, "xz -c < $IN > $OUT")
	for _, padding := range []int{4, 4096, 1 << 20} {
		for _, streams := range []int{1, 2} {
			var file []byte
			for i := 0; i < streams; i++ {
				file = append(append(file, one...), make([]byte, padding)...)
			}
			c := &countingAt{r: bytes.NewReader(file)}
			got, err := XzSize(c, int64(len(file)))
			if err != nil || got != int64(streams*len(data)) {
				t.Fatalf("%d streams, %d bytes of padding: XzSize %d, %v; want %d", streams, padding, got, err, streams*len(data))
			}
			if n := c.reads.Load(); n > int64(20*streams) {
				t.Errorf("%d streams, %d bytes of padding: %d reads", streams, padding, n)
			}
		}
	}
	// Padding that is not a multiple of four is no xz file.
	bad := append(bytes.Clone(one), 0, 0, 0)
	if _, err := XzSize(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Fatal("3 bytes of padding: a size")
	}
}
