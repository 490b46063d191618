package inflate

import (
	"errors"
	"io"
	"math/bits"
	"testing"
)

// bitWriter makes hand-made streams: fields first bit lowest, Huffman
// codes first bit highest, as RFC 1951 packs them.
type bitWriter struct {
	b []byte
	n uint // bits used in the last byte
}

func (w *bitWriter) field(v uint32, n uint) *bitWriter {
	for i := range n {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.n % 8)
		w.n++
	}
	return w
}

func (w *bitWriter) code(c uint32, n uint) *bitWriter {
	return w.field(bits.Reverse32(c)>>(32-n), n)
}

// fixedSym writes symbol s of the fixed literal/length code.
func (w *bitWriter) fixedSym(s uint32) *bitWriter {
	switch {
	case s < 144:
		return w.code(0x30+s, 8)
	case s < 256:
		return w.code(0x190+s-144, 9)
	case s < 280:
		return w.code(s-256, 7)
	}
	return w.code(0xc0+s-280, 8)
}

// dynamic starts a final dynamic block with these counts and code-length
// code lengths (in preOrder).
func dynamic(hlit, hdist uint32, pre ...uint32) *bitWriter {
	w := (&bitWriter{}).field(1, 1).field(2, 2).field(hlit, 5).field(hdist, 5).field(uint32(len(pre)-4), 4)
	for _, l := range pre {
		w.field(l, 3)
	}
	return w
}

func repeatCode(w *bitWriter, c uint32, n uint, times int) *bitWriter {
	for range times {
		w.code(c, n)
	}
	return w
}

// TestMalformed feeds hand-made damaged streams: Decode and the
// reference both fail, Decode with the error it should.
func TestMalformed(t *testing.T) {
	a := uint32('a')
	cases := []struct {
		name string
		src  []byte
		size int
		want error
	}{
		{"empty input", nil, 1, io.ErrUnexpectedEOF},
		{"block type 3", []byte{0x07, 0, 0, 0}, 1, errBlockType},
		{"stored length and complement disagree", []byte{0x01, 0x02, 0x00, 0xfd, 0xfe, 'a', 'b'}, 2, errStoredLen},
		{"stored block cut", []byte{0x01, 0x04, 0x00, 0xfb, 0xff, 'a', 'b'}, 3, io.ErrUnexpectedEOF},
		{"stored header cut", []byte{0x01, 0x04, 0x00}, 1, io.ErrUnexpectedEOF},
		{"final block ends early", (&bitWriter{}).field(1, 1).field(1, 2).fixedSym(a).fixedSym(256).b, 2, io.ErrUnexpectedEOF},
		{"stream cut inside a code", (&bitWriter{}).field(1, 1).field(1, 2).fixedSym(a).fixedSym(a).b[:1], 2, io.ErrUnexpectedEOF},
		{"distance past the start", (&bitWriter{}).field(1, 1).field(1, 2).fixedSym(a).fixedSym(257).code(1, 5).b, 4, errDistance},
		{"length symbol 286", (&bitWriter{}).field(1, 1).field(1, 2).fixedSym(a).fixedSym(286).b, 4, errCode},
		{"distance symbol 30", (&bitWriter{}).field(1, 1).field(1, 2).fixedSym(a).fixedSym(257).code(30, 5).b, 4, errCode},
		{"287 literal/length codes", dynamic(30, 0, 0, 0, 0, 1, 1).b, 1, errCounts},
		{"31 distance codes", dynamic(0, 30, 0, 0, 0, 1, 1).b, 1, errCounts},
		{"code-length code over-subscribed", dynamic(0, 0, 0, 0, 0, 1, 1, 1).b, 1, errTree},
		{"code-length code incomplete", dynamic(0, 0, 0, 0, 0, 2, 2).b, 1, errTree},
		// Symbols 0 and 16 of one bit (codes 0 and 1); 16 first repeats
		// nothing.
		{"repeat with no length before", dynamic(0, 0, 1, 0, 0, 1).code(1, 1).field(0, 2).b, 1, errRepeat},
		// 1 and 18 of one bit (codes 0 and 1): 1 for all 258 codes is
		// over-subscribed.
		{"literal/length code over-subscribed", repeatCode(dynamic(0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), 0, 1, 258).b, 1, errTree},
		// 0 and 18 of one bit (codes 0 and 1): 18 repeats past the last
		// length.
		{"repeat past the last length", dynamic(0, 0, 0, 0, 1, 1).code(1, 1).field(127, 7).code(1, 1).field(127, 7).b, 1, errRepeat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := make([]byte, c.size)
			if err := reference(make([]byte, c.size), c.src); err == nil {
				t.Fatalf("the reference accepts the stream")
			}
			err := Decode(dst, c.src)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode says %v, want %v", err, c.want)
			}
		})
	}
}
