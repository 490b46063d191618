package unpack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

var sizes = []int{0, 1, 511, 4097, 1<<20 + 3, 3<<20 + 17}

// packers are the ways images are made, each with the tools it needs.
var packers = []struct {
	name   string
	format Format
	tools  []string
	cmd    string
}{
	{"xz-T1", Xz, []string{"xz"}, `xz -T1 -0 -c "$IN" > "$OUT"`},
	{"xz-T0", Xz, []string{"xz"}, `xz -T0 -0 -c "$IN" > "$OUT"`},
	{"xz-T2-blocks", Xz, []string{"xz"}, `xz -T2 -0 --block-size=300000 -c "$IN" > "$OUT"`},
	{"xz-blocks-sha256", Xz, []string{"xz"}, `xz -T1 -0 --check=sha256 --block-size=200000 -c "$IN" > "$OUT"`},
	{"xz-crc32", Xz, []string{"xz"}, `xz -T2 -0 --check=crc32 --block-size=500000 -c "$IN" > "$OUT"`},
	{"xz-none", Xz, []string{"xz"}, `xz -T2 -0 --check=none --block-size=500000 -c "$IN" > "$OUT"`},
	{"xz-streams", Xz, []string{"xz"}, `{ head -c 1000 "$IN" | xz -T1 -0; printf '\0\0\0\0'; tail -c +1001 "$IN" | xz -T2 -0 --block-size=400000; } > "$OUT"`},
	{"gzip", Gzip, []string{"gzip"}, `gzip -c "$IN" > "$OUT"`},
	{"pigz", Gzip, []string{"pigz"}, `pigz -p 2 -c "$IN" > "$OUT"`},
	{"gzip-members", Gzip, []string{"gzip"}, `{ head -c 1000 "$IN" | gzip; tail -c +1001 "$IN" | gzip; } > "$OUT"`},
	{"zstd", Zstd, []string{"zstd"}, `zstd -q -c "$IN" > "$OUT"`},
	{"zstd-T0", Zstd, []string{"zstd"}, `zstd -q -T0 -c "$IN" > "$OUT"`},
	{"zstd-long", Zstd, []string{"zstd"}, `zstd -q --long=27 -c "$IN" > "$OUT"`},
	{"zstd-rsyncable", Zstd, []string{"zstd"}, `zstd -q -T2 --rsyncable -c "$IN" > "$OUT"`},
	{"zstd-no-check", Zstd, []string{"zstd"}, `zstd -q --no-check -c "$IN" > "$OUT"`},
	{"pzstd", Zstd, []string{"pzstd"}, `pzstd -q -p 2 -c "$IN" > "$OUT"`},
	{"zstd-frames", Zstd, []string{"zstd"}, `{ head -c 300000 "$IN" | zstd -q; tail -c +300001 "$IN" | head -c 700000 | zstd -q; tail -c +1000001 "$IN" | zstd -q --no-check; } > "$OUT"`},
	{"bzip2", Bzip2, []string{"bzip2"}, `bzip2 -c "$IN" > "$OUT"`},
	{"bzip2-streams", Bzip2, []string{"bzip2"}, `{ head -c 1000 "$IN" | bzip2; tail -c +1001 "$IN" | bzip2; } > "$OUT"`},
}

// unpackAll reads all of packed through a Reader with opts.
func unpackAll(packed []byte, opts Options) ([]byte, *Reader, error) {
	r, err := NewReader(bytes.NewReader(packed), opts)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	return out, r, err
}

// TestFormats: every packer's output at every size, decoded on one core,
// on several, and with a unit limit small enough to force decoding in
// place, is the original and what the format's tool makes of it; the
// counts add up.
func TestFormats(t *testing.T) {
	for _, pk := range packers {
		t.Run(pk.name, func(t *testing.T) {
			need(t, pk.tools...)
			for _, n := range sizes {
				raw := image(n, uint64(n))
				packed := compress(t, raw, pk.cmd)
				if n > 0 || pk.format != Zstd {
					sameBytes(t, "the tool's output", toolDecompress(t, pk.format, packed), raw)
				}
				for _, opts := range []Options{{Threads: 1}, {Threads: 4}, {Threads: 2, MaxUnit: 100_000}} {
					what := fmt.Sprintf("%d bytes, %+v", n, opts)
					got, r, err := unpackAll(packed, opts)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if r.Format() != pk.format {
						t.Fatalf("%s: recognized as %v", what, r.Format())
					}
					sameBytes(t, what, got, raw)
					if r.In() != int64(len(packed)) || r.Out() != int64(n) {
						t.Fatalf("%s: In %d Out %d, want %d and %d", what, r.In(), r.Out(), len(packed), n)
					}
				}
			}
		})
	}
}

// TestDamaged: a changed byte inside the compressed data, or input cut
// short anywhere inside it, ends in an error: never a stream that ends
// cleanly.
func TestDamaged(t *testing.T) {
	raw := image(1<<20+3, 7)
	for _, pk := range packers {
		if pk.name == "zstd-no-check" || pk.name == "xz-none" {
			continue // nothing to detect a changed byte with
		}
		t.Run(pk.name, func(t *testing.T) {
			need(t, pk.tools...)
			packed := compress(t, raw, pk.cmd)
			for _, cut := range []int{len(packed) / 3, len(packed) / 2, len(packed) - 1, 10} {
				for _, threads := range []int{1, 3} {
					_, _, err := unpackAll(packed[:cut], Options{Threads: threads})
					if err == nil {
						t.Fatalf("cut at %d of %d: no error", cut, len(packed))
					}
					if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrCorrupt) {
						t.Fatalf("cut at %d: %v, want ErrUnexpectedEOF or ErrCorrupt", cut, err)
					}
				}
			}
			for _, at := range []int{len(packed) / 2, len(packed) * 3 / 4} {
				bad := append([]byte(nil), packed...)
				bad[at] ^= 0x55
				got, _, err := unpackAll(bad, Options{Threads: 2})
				if err == nil {
					t.Fatalf("byte %d of %d changed: no error (%d bytes out, same as the original: %v)",
						at, len(packed), len(got), bytes.Equal(got, raw))
				}
			}
		})
	}
}

// TestDetect: the first bytes name the format; anything else is raw.
func TestDetect(t *testing.T) {
	for head, want := range map[string]Format{
		"\xfd7zXZ\x00\x00\x04":                 Xz,
		"\x1f\x8b\x08\x00":                     Gzip,
		"\x28\xb5\x2f\xfd\x04":                 Zstd,
		"\x50\x2a\x4d\x18\x04\x00\x00\x00":     Zstd, // pzstd's skippable frame
		"BZh91AY&SY":                           Bzip2,
		"BZh9\x17rE8P\x90":                     Bzip2,
		"BZh0":                                 Raw,
		"QFI\xfb\x00\x00\x00\x03":              Raw, // qcow2 is another issue's
		"":                                     Raw,
		"\x1f\x8b":                             Raw,
		"\xeb\x63\x90\x00\x00\x00\x00\x00\x00": Raw, // an MBR
	} {
		if got := Detect([]byte(head)); got != want {
			t.Errorf("Detect(%q) = %v, want %v", head, got, want)
		}
	}
}

// TestRawPassThrough: Format Raw gives the bytes as they are, even those
// of a compressed file.
func TestRawPassThrough(t *testing.T) {
	data := []byte("\xfd7zXZ\x00 not really xz")
	got, r, err := unpackAll(data, Options{Format: Raw})
	if err != nil || !bytes.Equal(got, data) || r.Format() != Raw {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestXzSize: the size read from the indexes is the decompressed size,
// for one stream, many blocks, several streams with padding; a cut file
// is refused.
func TestXzSize(t *testing.T) {
	for _, pk := range packers {
		if pk.format != Xz {
			continue
		}
		need(t, pk.tools...)
		for _, n := range sizes {
			packed := compress(t, image(n, 3), pk.cmd)
			got, err := XzSize(bytes.NewReader(packed), int64(len(packed)))
			if err != nil || got != int64(n) {
				t.Fatalf("%s, %d bytes: XzSize %d, %v", pk.name, n, got, err)
			}
			if n > 0 {
				if _, err := XzSize(bytes.NewReader(packed), int64(len(packed)-4)); err == nil {
					t.Fatalf("%s: a cut file has a size", pk.name)
				}
			}
		}
	}
}
