package inflate

import (
	"bytes"
	stdflate "compress/flate"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"testing"

	kflate "github.com/klauspost/compress/flate"
)

// reference is the contract: io.ReadFull over the standard library's
// reader.
func reference(dst, src []byte) error {
	_, err := io.ReadFull(stdflate.NewReader(bytes.NewReader(src)), dst)
	return err
}

// contents are the kinds of data the streams carry.
func contents(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 3<<20)
	rng.Read(random)
	text := make([]byte, 0, 3<<20)
	words := []string{"qcow2 ", "cluster ", "the ", "guest ", "\n", "io_uring "}
	for len(text) < 3<<20 {
		if rng.Intn(10) == 0 {
			text = append(text, random[:rng.Intn(40)]...)
		}
		text = append(text, words[rng.Intn(len(words))]...)
	}
	runs := make([]byte, 3<<20) // runs of one byte and short patterns
	for i := 0; i < len(runs); {
		n := min(rng.Intn(600)+1, len(runs)-i)
		p := random[i%1000 : i%1000+rng.Intn(9)+1]
		for j := range n {
			runs[i+j] = p[j%len(p)]
		}
		i += n
	}
	m := map[string][]byte{"random": random, "text": text, "runs": runs, "zeros": make([]byte, 3<<20)}
	if b, err := os.ReadFile("/proc/self/exe"); err == nil && len(b) >= 3<<20 {
		m["binary"] = b[:3<<20]
	}
	return m
}

type compressor struct {
	name  string
	level int
	fn    func(w io.Writer) io.WriteCloser
}

func compressors() []compressor {
	var cs []compressor
	for _, l := range []int{-2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9} {
		cs = append(cs,
			compressor{fmt.Sprintf("std%d", l), l, func(w io.Writer) io.WriteCloser { z, _ := stdflate.NewWriter(w, l); return z }},
			compressor{fmt.Sprintf("klauspost%d", l), l, func(w io.Writer) io.WriteCloser { z, _ := kflate.NewWriter(w, l); return z }})
	}
	return cs
}

func deflate(c compressor, p []byte) []byte {
	var b bytes.Buffer
	w := c.fn(&b)
	w.Write(p)
	w.Close()
	return b.Bytes()
}

// TestDifferential inflates streams of every level of both Go
// compressors, at awkward sizes, into outputs of the exact size, one
// byte short (Decode stops) and one byte long (it fails), and compares
// with the reference; trailing bytes after the stream are ignored. The
// largest clusters (2 MiB, QEMU's largest) are made at the levels that
// differ in kind only (Huffman only, stored, QEMU's 6), to keep the test
// short under -race.
func TestDifferential(t *testing.T) {
	for name, data := range contents(t) {
		for _, c := range compressors() {
			sizes := []int{1, 2, 511, 512, 4096, 4097, 65535, 65536}
			if c.level == -2 || c.level == 0 || c.level == 6 {
				sizes = append(sizes, 2<<20)
			}
			for _, n := range sizes {
				src := deflate(c, data[:n])
				src = append(src, 0xff, 0x00, 0x5a) // the next cluster's bytes
				for _, size := range []int{n - 1, n, n + 1} {
					check(t, name+"/"+c.name, make([]byte, size), src)
				}
			}
		}
	}
}

// check decodes src into dst with Decode and the reference and wants the
// same outcome.
func check(t *testing.T, what string, dst, src []byte) {
	t.Helper()
	want := make([]byte, len(dst))
	wantErr := reference(want, src)
	gotErr := Decode(dst, src)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: %d bytes: Decode says %v, the reference %v", what, len(dst), gotErr, wantErr)
	}
	if gotErr == nil && !bytes.Equal(dst, want) {
		t.Fatalf("%s: %d bytes differ from the reference's", what, len(dst))
	}
	if wantErr != nil && errors.Is(wantErr, io.ErrUnexpectedEOF) != errors.Is(gotErr, io.ErrUnexpectedEOF) {
		t.Fatalf("%s: %d bytes: Decode says %v, the reference %v", what, len(dst), gotErr, wantErr)
	}
}
