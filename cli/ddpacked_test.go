package cli

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestDDCompressedSrc: ringcp dd reads a compressed SRC (.zst, .gz) as
// the bytes it unpacks to, whose size it cannot know before their end.
// It was taken for a SRC of 16 TiB (the length an open-ended copy is
// given), so `dd if=x.zst of=new` was refused for want of room, and
// count= and skip= were cut at that size, not at the data's end.
func TestDDCompressedSrc(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1<<20+4097)
	rng := rand.New(rand.NewPCG(27, 3))
	for i := range data {
		data[i] = byte(rng.UintN(7)) // compressible, not all zero
	}
	packed := map[string][]byte{".zst": zstdBytes(t, data), ".gz": gzipBytes(t, data)}
	for ext, b := range packed {
		src := filepath.Join(dir, "src"+ext)
		if err := os.WriteFile(src, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ops        string
			start, end int
		}{
			{"", 0, len(data)},
			{"bs=4096", 0, len(data)},
			{"bs=64k skip=3 count=5", 3 << 16, 8 << 16},
			{"bs=512 skip=2053", 2053 * 512, len(data)},
			{"bs=1M skip=1", 1 << 20, len(data)},
		} {
			out := filepath.Join(dir, "out.raw")
			os.Remove(out)
			args := append([]string{"dd", "if=" + src, "of=" + out, "status=none"}, strings.Fields(c.ops)...)
			cli(t, args...).want(t, exitOK)
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data[c.start:c.end]) {
				t.Errorf("dd if=%s %s: %d bytes, want bytes %d to %d of what it unpacks to", filepath.Base(src), c.ops, len(got), c.start, c.end)
			}
		}
	}
}

// TestDDCompressedSrcPastEnd: count= and skip= past the end of what a
// compressed SRC unpacks to are cut there, as dd cuts them at end of file
// (and as `zstd -dc x.zst | dd iflag=fullblock` does): count= past the
// end copies to the end, skip= past it warns and copies nothing, exit 0.
// Both failed the copy (exit 1, "source ended early (it shrank during
// the copy?)" and "the copy ended before SRC did").
func TestDDCompressedSrcPastEnd(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1<<20+4097)
	rng := rand.New(rand.NewPCG(27, 4))
	for i := range data {
		data[i] = byte(rng.UintN(7))
	}
	packed := map[string][]byte{".zst": zstdBytes(t, data), ".gz": gzipBytes(t, data)}
	for ext, b := range packed {
		src := filepath.Join(dir, "src"+ext)
		if err := os.WriteFile(src, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ops        string
			start, end int
			warn       string
		}{
			{"bs=1M count=100", 0, len(data), ""},
			{"bs=64k skip=3 count=100", 3 << 16, len(data), ""},
			{"bs=512 skip=2056 count=1", 2056 * 512, len(data), ""},
			{"bs=512 skip=2057 count=1", len(data), len(data), "cannot skip to specified offset"},
			{"bs=1M skip=5", len(data), len(data), "cannot skip to specified offset"},
			{"bs=4097 skip=257 count=1", len(data), len(data), "cannot skip to specified offset"},
			{"bs=4097 skip=256 count=2", 256 * 4097, len(data), ""},
		} {
			out := filepath.Join(dir, "out.raw")
			os.Remove(out)
			args := append([]string{"dd", "if=" + src, "of=" + out, "status=none"}, strings.Fields(c.ops)...)
			cli(t, args...).want(t, exitOK, c.warn)
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data[c.start:c.end]) {
				t.Errorf("dd if=%s %s: %d bytes, want bytes %d to %d of what it unpacks to", filepath.Base(src), c.ops, len(got), c.start, c.end)
			}
		}
	}
}

func zstdBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

func gzipBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
