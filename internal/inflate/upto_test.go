package inflate

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"compress/flate"
)

// upToReference is DecodeUpTo's contract over compress/flate's reader
// (klauspost's ended a cut stream with io.EOF here: level 7's 511 bytes
// of "binary" cut by 3): read to the stream's end, at most len(dst)
// bytes. The input bytes used are checked by TestDecodeUpTo.
func upToReference(dst, src []byte) (int, error) {
	r := flate.NewReader(bytes.NewReader(src))
	n := 0
	for n < len(dst) {
		m, err := r.Read(dst[n:])
		n += m
		if err == io.EOF {
			return n, nil // the stream ended before dst was full
		}
		if err != nil {
			return n, err
		}
	}
	var one [1]byte
	if m, err := r.Read(one[:]); m > 0 {
		return n, ErrLong
	} else if err != io.EOF {
		return n, err
	}
	return n, nil
}

// TestDecodeUpTo decodes streams of every level into outputs shorter
// than, as long as and longer than their data, whole, cut and followed
// by junk, and compares with the reference; where it succeeds, what
// follows the stream in src starts at used.
func TestDecodeUpTo(t *testing.T) {
	for name, data := range contents(t) {
		for _, c := range compressors() {
			for _, n := range []int{1, 2, 511, 4096, 4097, 65536} {
				full := deflate(c, data[:n])
				junk := []byte{0xde, 0xad, 0xbe, 0xef}
				srcs := [][]byte{full, append(full[:len(full):len(full)], junk...)}
				for cut := 1; cut <= 3 && cut < len(full); cut++ {
					srcs = append(srcs, full[:len(full)-cut])
				}
				for i, src := range srcs {
					for _, size := range []int{n - 1, n, n + 1, 2 * n} {
						dst, want := make([]byte, size), make([]byte, size)
						got, used, err := DecodeUpTo(dst, src)
						wn, werr := upToReference(want, src)
						if err == nil && errors.Is(werr, io.ErrUnexpectedEOF) {
							wn, werr = upToReference(want, append(src[:len(src):len(src)], make([]byte, 8)...))
						}
						if (err == nil) != (werr == nil) || err == nil && (got != wn || !bytes.Equal(dst[:got], want[:wn])) {
							t.Fatalf("%s/%s: source %d, %d bytes: DecodeUpTo = %d, %v; the reference %d, %v", name, c.name, i, size, got, err, wn, werr)
						}
						if errors.Is(werr, ErrLong) && !errors.Is(err, ErrLong) {
							t.Fatalf("%s/%s: source %d, %d bytes: %v, want ErrLong", name, c.name, i, size, err)
						}
						if err == nil && (used != len(full) || i == 1 && !bytes.Equal(src[used:], junk)) {
							t.Fatalf("%s/%s: source %d: used %d of a %d-byte stream", name, c.name, i, used, len(full))
						}
					}
				}
			}
		}
	}
}

// FuzzDecodeUpTo decodes arbitrary input with DecodeUpTo and compares
// with the reference (with TestDecodeWhole's allowance for reading
// ahead), and with DecodeWhole: a stream that fills dst and ends there
// is one DecodeWhole accepts, with the same bytes.
func FuzzDecodeUpTo(f *testing.F) {
	text := contents(f)["text"]
	for _, c := range compressors()[:8] {
		for _, n := range []int{1, 100, 5000} {
			f.Add(uint32(n), deflate(c, text[:n]))
			f.Add(uint32(2*n), deflate(c, text[:n]))
		}
	}
	f.Fuzz(func(t *testing.T, size uint32, src []byte) {
		n := int(size % (1 << 17))
		got, want := make([]byte, n), make([]byte, n)
		gn, used, err := DecodeUpTo(got, src)
		wn, werr := upToReference(want, src)
		if err == nil && errors.Is(werr, io.ErrUnexpectedEOF) {
			wn, werr = upToReference(want, append(src[:len(src):len(src)], make([]byte, 8)...))
		}
		if werr == nil && (errors.Is(err, errBeyond) || errors.Is(err, errNoEnd)) {
			return // zlib's refusals, which the reference does not make
		}
		if (err == nil) != (werr == nil) || err == nil && (gn != wn || !bytes.Equal(got[:gn], want[:wn])) {
			t.Fatalf("%d bytes: DecodeUpTo = %d, %v; the reference %d, %v", n, gn, err, wn, werr)
		}
		if err != nil {
			return
		}
		if used > len(src) {
			t.Fatalf("used %d of %d bytes", used, len(src))
		}
		if gn == n && n > 0 {
			whole := make([]byte, n)
			if err := DecodeWhole(whole, src[:used]); err != nil || !bytes.Equal(whole, got) {
				t.Fatalf("%d bytes: DecodeUpTo succeeds in %d bytes of input, DecodeWhole says %v", n, used, err)
			}
		}
		if gn < n {
			again := make([]byte, gn)
			if _, u, err := DecodeUpTo(again, src[:used]); err != nil || u != used || !bytes.Equal(again, got[:gn]) {
				t.Fatalf("%d bytes in %d: again into %d bytes: used %d, %v", gn, used, gn, u, err)
			}
		}
	})
}
