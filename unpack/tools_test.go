package unpack

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// image is n bytes shaped like a disk image: runs of zeros, of text, of
// random bytes, so that compressors have work of every kind.
func image(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	text := []byte("the quick brown fox jumps over the lazy dog 0123456789\n")
	for off := 0; off < n; {
		run := min(1+r.IntN(70_000), n-off)
		switch r.IntN(3) {
		case 0: // zeros
		case 1:
			for i := 0; i < run; i++ {
				b[off+i] = text[(off+i)%len(text)]
			}
		case 2:
			for i := 0; i < run; i++ {
				b[off+i] = byte(r.Uint32())
			}
		}
		off += run
	}
	return b
}

// need skips the test unless the tools are installed.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian: xz-utils, gzip, pigz, zstd, bzip2)", tool)
		}
	}
}

// compress runs the shell command cmd with $IN the raw file and $OUT the
// file it must write, and returns $OUT's bytes.
func compress(t testing.TB, raw []byte, cmd string) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("sh", "-c", cmd)
	c.Env = append(os.Environ(), "IN="+in, "OUT="+out)
	if msg, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// toolDecompress is what the format's own tool makes of packed (xz -dc,
// zstd -dc...), the reference the decoders are compared with.
func toolDecompress(t testing.TB, f Format, packed []byte) []byte {
	t.Helper()
	tool := map[Format]string{Xz: "xz -dc", Gzip: "gzip -dc", Zstd: "zstd -dcq", Bzip2: "bzip2 -dc"}[f]
	c := exec.Command("sh", "-c", tool)
	c.Stdin = bytes.NewReader(packed)
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return out
}

// sameBytes fails the test unless got is want, naming the first
// difference.
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: differs at byte %d (got %d bytes, want %d)", what, i, len(got), len(want))
}

var _ = fmt.Sprint
