package unpack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"testing"
)

// lzma2Settings are xz's LZMA2 options that change what the decoder
// meets: literal context and position bits, position bits, a dictionary
// smaller than the input (long matches reach its edge), the match
// finders and modes.
var lzma2Settings = []string{
	"preset=0", "preset=6", "preset=9e", "lc=0,lp=0,pb=0", "lc=4,lp=0,pb=4", "lc=0,lp=4,pb=2",
	"lc=2,lp=2,pb=1", "dict=4KiB", "dict=64KiB,mf=hc3", "mode=fast,mf=hc4,nice=8", "mode=normal,mf=bt2,nice=273",
}

// TestLZMA2Settings: images packed with each setting, in one block (the
// sliding window) and in small blocks (whole blocks by workers, and the
// same blocks in place), decode to the original.
func TestLZMA2Settings(t *testing.T) {
	need(t, "xz")
	raw := image(1<<20+17, 11)
	raw = append(raw, raw[:300_000]...) // a repeat 1 MiB back
	for _, set := range lzma2Settings {
		for _, blocks := range []string{"-T1", "-T2 --block-size=400000"} {
			cmd := fmt.Sprintf(`xz %s --lzma2=%s -c "$IN" > "$OUT"`, blocks, set)
			packed := compress(t, raw, cmd)
			for _, opts := range []Options{{Threads: 1}, {Threads: 2}, {Threads: 2, MaxUnit: 100_000}} {
				got, _, err := unpackAll(packed, opts)
				if err != nil {
					t.Fatalf("%s, %+v: %v", cmd, opts, err)
				}
				sameBytes(t, cmd, got, raw)
			}
		}
	}
}

// rawLZMA2 is raw's LZMA2 data alone (xz --format=raw), end chunk
// included.
func rawLZMA2(t testing.TB, raw []byte, set string) []byte {
	return compress(t, raw, `xz --format=raw --lzma2=`+set+` -c "$IN" > "$OUT"`)
}

// decodeBoth decodes LZMA2 data whose output is n bytes in a fixed
// window and in a sliding one: both must agree.
func decodeBoth(t testing.TB, in []byte, dict, n int) ([]byte, error) {
	t.Helper()
	fixed := make([]byte, n)
	errFixed := decodeLZMA2Into(in, dict, fixed)
	src := bytes.NewReader(in)
	// No more than one byte past n: LZMA2 chunks of a few bytes can
	// say 2 MiB each.
	slid, errSlid := io.ReadAll(io.LimitReader(newLZMA2Reader(src, dict), int64(n)+1))
	if errSlid == nil && (len(slid) != n || src.Len() != 0) {
		errSlid = corrupt("%d bytes, not %d, %d bytes left", len(slid), n, src.Len())
	}
	if (errFixed == nil) != (errSlid == nil) || errFixed == nil && !bytes.Equal(fixed, slid) {
		t.Fatalf("fixed window: %v; sliding window: %v (%d bytes); they disagree", errFixed, errSlid, len(slid))
	}
	if errFixed != nil {
		return nil, errFixed
	}
	return fixed, nil
}

// TestLZMA2Refuses: LZMA2 data that breaks a rule of the format is
// corrupt, in a fixed window and in a sliding one.
func TestLZMA2Refuses(t *testing.T) {
	need(t, "xz")
	raw := image(1<<20+3, 5)
	raw = append(raw, raw[:300_000]...)
	good := rawLZMA2(t, raw, "preset=6,dict=2MiB")
	if got, err := decodeBoth(t, good, 2<<20, len(raw)); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("the good data: %v", err)
	}
	if good[0]&0xE0 != 0xE0 {
		t.Fatalf("first control byte %#x, want 0xE0 and up (dictionary reset, new properties)", good[0])
	}
	high := good[0] & 0x1F // the unpacked size's high bits
	edit := func(at int, b byte) []byte {
		bad := append([]byte(nil), good...)
		bad[at] = b
		return bad
	}
	for _, c := range []struct {
		name string
		in   []byte
		dict int
		n    int
	}{
		{"no dictionary reset first", edit(0, 0xC0|high), 2 << 20, len(raw)},
		{"no properties first", edit(0, 0xA0|high), 2 << 20, len(raw)},
		{"control byte 3", edit(0, 0x03), 2 << 20, len(raw)},
		{"lc+lp above 4", edit(5, 4+9*1), 2 << 20, len(raw)},
		{"properties byte out of range", edit(5, 225), 2 << 20, len(raw)},
		{"packed size one short", edit(4, good[4]-1), 2 << 20, len(raw)},
		{"packed size one long", edit(4, good[4]+1), 2 << 20, len(raw)},
		{"unpacked size one short", edit(2, good[2]-1), 2 << 20, len(raw)},
		{"a match beyond the dictionary", good, 64 << 10, len(raw)},
		{"no end chunk", good[:len(good)-1], 2 << 20, len(raw)},
		{"cut in a chunk", good[:len(good)/2], 2 << 20, len(raw)},
		{"output longer than said", good, 2 << 20, len(raw) - 1},
		{"output shorter than said", good, 2 << 20, len(raw) + 1},
	} {
		_, err := decodeBoth(t, c.in, c.dict, c.n)
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v, want ErrCorrupt or ErrUnexpectedEOF", c.name, err)
		}
	}
}

// FuzzLZMA2: whatever the data, the decoder neither panics nor runs
// past its bounds, and its fixed and sliding windows agree.
//
//	go test -run - -fuzz FuzzLZMA2 -fuzztime 60s ./unpack/
func FuzzLZMA2(f *testing.F) {
	if _, err := exec.LookPath("xz"); err == nil {
		raw := image(20_000, 9)
		for _, set := range []string{"preset=0", "lc=0,lp=4,pb=4", "dict=4KiB"} {
			f.Add(rawLZMA2(f, raw, set), 20_000)
		}
	}
	f.Add([]byte{0xE0, 0, 3, 0, 5, 0x5D, 0, 0, 0, 0, 0, 0}, 4)
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		if n < 0 || n > 256<<10 {
			return
		}
		decodeBoth(t, in, 1<<20, n)
	})
}

// TestLZMA2WindowGrows: a block that names a dictionary far larger than
// its data (1.5 GiB, the most xz writes, here on 200 KB) gets a window
// in proportion to the data, not to the name: a few hundred bytes of
// header must not make the process reserve gigabytes (under ulimit -v
// that was Go's fatal "out of memory", a crash, not an error). Before,
// the sliding window took the whole dictionary and its room at the first
// chunk.
func TestLZMA2WindowGrows(t *testing.T) {
	need(t, "xz")
	raw := image(200_000, 17)
	raw = append(raw, raw[:50_000]...)
	packed := rawLZMA2(t, raw, "preset=6,dict=1536MiB")
	z := newLZMA2Reader(bytes.NewReader(packed), 1536<<20)
	first := make([]byte, 1)
	if _, err := io.ReadFull(z, first); err != nil {
		t.Fatal(err)
	}
	if c := cap(z.w.buf); c > 64<<20 {
		t.Fatalf("a window of %d bytes for %d bytes of data", c, len(raw))
	}
	rest, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "1.5 GiB dictionary", append(first, rest...), raw)
}

// TestLZMA2WindowGrowsKeepsHistory: a window that grows past its first
// size keeps every byte a match may reach: 6 MiB of data then a repeat
// of its first MiB, 6 MiB back, in a dictionary of 8 MiB.
func TestLZMA2WindowGrowsKeepsHistory(t *testing.T) {
	need(t, "xz")
	raw := image(6<<20+5, 23)
	raw = append(raw, raw[:1<<20]...)
	packed := rawLZMA2(t, raw, "preset=0,dict=8MiB")
	got, err := decodeBoth(t, packed, 8<<20, len(raw))
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "a match 6 MiB back", got, raw)
	if _, err := decodeBoth(t, packed, 4<<20, len(raw)); err == nil {
		t.Fatal("a match 6 MiB back decoded with a dictionary of 4 MiB")
	}
}
