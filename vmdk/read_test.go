package vmdk

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"testing"

	"github.com/ringcp/ringcp/internal/inflate"
)

// TestZlibData: a grain's zlib framing is checked as compress/zlib
// checks it, and the deflate stream inside inflates to the grain.
func TestZlibData(t *testing.T) {
	want := bytes.Repeat([]byte("vmdk grain "), 6000)
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(want)
	zw.Close()
	good := b.Bytes()
	d, err := zlibData(good)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := inflate.Decode(got, d); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Decode: %v (same bytes: %v)", err, bytes.Equal(got, want))
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"one byte", good[:1], io.ErrUnexpectedEOF},
		{"not deflate", []byte{0x79, 0x18}, zlib.ErrHeader},
		{"window of 64 KiB", []byte{0x88, 0x1c}, zlib.ErrHeader},
		{"bad check", []byte{0x78, 0x9d}, zlib.ErrHeader},
		{"preset dictionary", []byte{0x78, 0xbb, 0, 0, 0, 0}, zlib.ErrDictionary},
	} {
		if _, err := zlibData(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s (%x): %v, want %v", c.name, c.b, err, c.want)
		}
		if _, err := zlib.NewReader(bytes.NewReader(c.b)); !errors.Is(err, c.want) {
			t.Errorf("%s (%x): compress/zlib says %v, want %v", c.name, c.b, err, c.want)
		}
	}
}
