package inflate

import (
	"bytes"
	"errors"
	"io"
	"testing"

	kflate "github.com/klauspost/compress/flate"
)

// wholeReference is DecodeWhole's contract over a streaming reader:
// io.ReadFull into dst, then a read that finds the stream's end.
func wholeReference(dst, src []byte) error {
	r := kflate.NewReader(bytes.NewReader(src))
	if _, err := io.ReadFull(r, dst); err != nil {
		return err
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n > 0 {
		return ErrLong
	} else if err != io.EOF {
		return err
	}
	return nil
}

// TestDecodeWhole decodes streams of every level of both Go compressors
// into outputs of the exact size (success), one byte short (ErrLong) and
// one byte long, the whole stream and the stream cut by one to three
// bytes (a cut end code fails), and with the final flag set on a stream
// that ends with an empty final block (the writer's trimmed clusters),
// and compares with the reference. The reference's reader may read a
// little past the end code (TestDifferential's allowance): where it then
// fails for want of input, it must succeed on the input followed by
// zeros.
func TestDecodeWhole(t *testing.T) {
	for name, data := range contents(t) {
		for _, c := range compressors() {
			for _, n := range []int{0, 1, 2, 511, 4096, 4097, 65536} {
				full := deflate(c, data[:n])
				srcs := [][]byte{full, append(full[:len(full):len(full)], 0xff, 0x00, 0x5a)}
				for cut := 1; cut <= 3 && cut < len(full); cut++ {
					srcs = append(srcs, full[:len(full)-cut])
				}
				if len(full) > 2 && full[0]&1 == 0 {
					marked := append([]byte(nil), full...)
					marked[0] |= 1
					srcs = append(srcs, marked, marked[:len(marked)-1], marked[:len(marked)-2])
				}
				for i, src := range srcs {
					for _, size := range []int{n - 1, n, n + 1} {
						if size >= 0 {
							checkWhole(t, name+"/"+c.name, i, make([]byte, size), src)
						}
					}
				}
			}
		}
	}
}

func checkWhole(t *testing.T, what string, i int, dst, src []byte) {
	t.Helper()
	want := make([]byte, len(dst))
	wantErr := wholeReference(want, src)
	gotErr := DecodeWhole(dst, src)
	if gotErr == nil && errors.Is(wantErr, io.ErrUnexpectedEOF) {
		wantErr = wholeReference(want, append(src[:len(src):len(src)], make([]byte, 8)...))
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: source %d, %d bytes: DecodeWhole says %v, the reference %v", what, i, len(dst), gotErr, wantErr)
	}
	if gotErr == nil && !bytes.Equal(dst, want) {
		t.Fatalf("%s: source %d, %d bytes differ from the reference's", what, i, len(dst))
	}
	if errors.Is(wantErr, ErrLong) && !errors.Is(gotErr, ErrLong) {
		t.Fatalf("%s: source %d, %d bytes: DecodeWhole says %v, the reference %v", what, i, len(dst), gotErr, wantErr)
	}
}

// FuzzDecodeWhole decodes arbitrary input with DecodeWhole and compares
// with the reference (with TestDecodeWhole's allowance for its reading
// ahead), and with Decode: what DecodeWhole accepts, Decode accepts with
// the same bytes.
func FuzzDecodeWhole(f *testing.F) {
	text := contents(f)["text"]
	for _, c := range compressors()[:8] {
		for _, n := range []int{1, 100, 5000} {
			f.Add(uint32(n), deflate(c, text[:n]))
		}
	}
	f.Add(uint32(1), []byte{0x07})
	f.Fuzz(func(t *testing.T, size uint32, src []byte) {
		n := int(size % (1 << 17))
		got, want := make([]byte, n), make([]byte, n)
		gotErr, wantErr := DecodeWhole(got, src), wholeReference(want, src)
		if gotErr == nil && errors.Is(wantErr, io.ErrUnexpectedEOF) {
			wantErr = wholeReference(want, append(src[:len(src):len(src)], make([]byte, 8)...))
		}
		if wantErr == nil && (errors.Is(gotErr, errBeyond) || errors.Is(gotErr, errNoEnd)) {
			return // zlib's refusals, which the reference does not make
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%d bytes: DecodeWhole says %v, the reference %v", n, gotErr, wantErr)
		}
		if gotErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%d bytes differ from the reference's", n)
		}
		if gotErr == nil && n > 0 {
			if err := Decode(want, src); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bytes: DecodeWhole succeeds, Decode says %v", n, err)
			}
		}
	})
}
