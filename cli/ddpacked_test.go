package cli

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
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

// TestDDIformatRaw: iformat=raw copies a compressed file's or a qcow2
// image's bytes as they are, as GNU dd does (there was no way to: ringcp
// dd read every such SRC through its format), and without it ringcp dd
// says on stderr that it reads SRC through its format, unless
// status=none.
func TestDDIformatRaw(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	data := make([]byte, 256<<10+511)
	rng := rand.New(rand.NewPCG(27, 5))
	for i := range data {
		data[i] = byte(rng.UintN(5))
	}
	zst, img := filepath.Join(dir, "src.zst"), filepath.Join(dir, "src.qcow2")
	if err := os.WriteFile(zst, zstdBytes(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "guest.raw")
	if err := os.WriteFile(raw, data[:256<<10], 0o644); err != nil {
		t.Fatal(err)
	}
	blocktest.Run(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, img)
	for _, src := range []string{zst, img} {
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, ops := range []string{"", "bs=4096", "bs=1M count=3", "bs=512 skip=3 count=2"} {
			out := filepath.Join(dir, "out")
			os.Remove(out)
			args := append([]string{"dd", "if=" + src, "of=" + out, "iformat=raw", "status=noxfer"}, strings.Fields(ops)...)
			r := cli(t, args...)
			r.want(t, exitOK)
			if strings.Contains(r.stderr, "read as the data its format holds") {
				t.Errorf("dd %s iformat=raw says it reads a format:\n%s", ops, r.stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			start, end := ddRange(t, ops, len(want))
			if !bytes.Equal(got, want[start:end]) {
				t.Errorf("dd if=%s iformat=raw %s: %d bytes, want the file's bytes %d to %d", filepath.Base(src), ops, len(got), start, end)
			}
		}
		out := filepath.Join(dir, "out")
		os.Remove(out)
		cli(t, "dd", "if="+src, "of="+out).want(t, exitOK, "read as the data its format holds", "iformat=raw copies its bytes as they are")
		if r := cli(t, "dd", "if="+src, "of="+out, "status=none"); r.stderr != "" {
			t.Errorf("status=none printed %q", r.stderr)
		}
	}
	cli(t, "dd", "if="+zst, "of="+filepath.Join(dir, "x"), "iformat=tar").want(t, exitRefused, "iformat=tar: want auto, raw")
}

// ddRange is the bytes of a file of size bytes that the operands ops
// (bs=, skip=, count= only) copy.
func ddRange(t *testing.T, ops string, size int) (start, end int) {
	t.Helper()
	bs, skip, count := 512, 0, -1
	for _, op := range strings.Fields(ops) {
		name, val, _ := strings.Cut(op, "=")
		n, err := strconv.Atoi(strings.TrimSuffix(val, "M"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(val, "M") {
			n <<= 20
		}
		switch name {
		case "bs":
			bs = n
		case "skip":
			skip = n
		case "count":
			count = n
		}
	}
	start, end = min(skip*bs, size), size
	if count >= 0 {
		end = min(start+count*bs, size)
	}
	return start, end
}
