package inflate

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzInflate decodes arbitrary input into an output of arbitrary size
// and compares with the reference: both succeed with the same bytes or
// both fail. The one allowance: the reference reads a little ahead (as
// many bits as the block's end code has, for any code), so it may fail
// for want of input where Decode, which reads only what the codes take,
// succeeds; then the reference must succeed, with the same bytes, on the
// input followed by zeros. And Decode fails, as zlib does (QEMU's
// reference, TestAgreesWithZlib), on a dynamic block with no end code and
// on what it reads past a full output, which the reference accepts.
func FuzzInflate(f *testing.F) {
	text := contents(f)["text"]
	for _, c := range compressors()[:8] {
		for _, n := range []int{1, 100, 5000} {
			f.Add(uint32(n), deflate(c, text[:n]))
		}
	}
	f.Add(uint32(1), []byte{0x07})
	f.Add(uint32(3), []byte{0x01, 0x03, 0x00, 0xfc, 0xff, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, size uint32, src []byte) {
		n := int(size%(1<<17)) + 1
		got, want := make([]byte, n), make([]byte, n)
		gotErr, wantErr := Decode(got, src), reference(want, src)
		if gotErr == nil && errors.Is(wantErr, io.ErrUnexpectedEOF) {
			padded := append(src[:len(src):len(src)], make([]byte, 8)...)
			wantErr = reference(want, padded)
		}
		if wantErr == nil && (errors.Is(gotErr, errBeyond) || errors.Is(gotErr, errNoEnd)) {
			return
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%d bytes: Decode says %v, the reference %v", n, gotErr, wantErr)
		}
		if gotErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%d bytes differ from the reference's", n)
		}
	})
}
