package unpack

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"testing"
)

// diffLimit bounds what either decoder's output is compared over: a few
// bytes of hostile LZMA2 may claim 2 MiB a chunk.
const diffLimit = 8 << 20

// xzTool runs xz with args on in and returns at most limit bytes of its
// output, whether it succeeded, and whether it had more to say (then it
// is killed and its status means nothing).
func xzTool(t testing.TB, in []byte, limit int, args ...string) (out []byte, ok, over bool) {
	t.Helper()
	c := exec.Command("xz", args...)
	c.Stdin = bytes.NewReader(in)
	pipe, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	out, _ = io.ReadAll(io.LimitReader(pipe, int64(limit)+1))
	if len(out) > limit {
		c.Process.Kill()
		c.Wait()
		return out[:limit], false, true
	}
	return out, c.Wait() == nil, false
}

// diffXz decodes packed with xz -dc and with unpack (one core, several,
// and blocks in place): where xz fails unpack must fail, where xz
// succeeds unpack must give the same bytes (or fail, when allowFail:
// what xz takes and unpack refuses by design).
func diffXz(t testing.TB, packed []byte, allowFail bool) {
	t.Helper()
	want, ok, over := xzTool(t, packed, diffLimit, "-dc")
	for _, opts := range []Options{{Format: Xz, Threads: 1}, {Format: Xz, Threads: 2}, {Format: Xz, Threads: 2, MaxUnit: 3000}} {
		r, err := NewReader(bytes.NewReader(packed), opts)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(io.LimitReader(r, diffLimit+1))
			r.Close()
		}
		what := fmt.Sprintf("%+v", opts)
		switch {
		case over || len(got) > diffLimit:
			// Compare what both gave, up to the limit.
			n := min(len(got), len(want), diffLimit)
			if err == nil && !bytes.Equal(got[:n], want[:n]) {
				sameBytes(t, what+": past the limit", got[:n], want[:n])
			}
		case !ok && err == nil:
			t.Fatalf("%s: xz -dc fails, unpack gives %d bytes and no error", what, len(got))
		case ok && err == nil:
			sameBytes(t, what+": against xz -dc", got, want)
		case ok && err != nil && !allowFail:
			t.Fatalf("%s: xz -dc gives %d bytes, unpack fails: %v", what, len(want), err)
		}
	}
}

// diffLZMA2 decodes raw LZMA2 data with xz --format=raw and with the
// sliding window: the same bytes, or both fail. dict is the dictionary
// both are given.
func diffLZMA2(t testing.TB, in []byte, dict string, dictCap int) {
	t.Helper()
	want, ok, over := xzTool(t, in, diffLimit, "-dc", "--format=raw", "--lzma2=dict="+dict)
	src := bytes.NewReader(in)
	got, err := io.ReadAll(io.LimitReader(newLZMA2Reader(src, dictCap), diffLimit+1))
	if err == nil && len(got) <= diffLimit && src.Len() != 0 {
		// xz's raw decoder stops at the end chunk and does not look
		// past it; neither does the reader. Cut the rest off both.
		want2, ok2, _ := xzTool(t, in[:len(in)-src.Len()], diffLimit, "-dc", "--format=raw", "--lzma2=dict="+dict)
		want, ok = want2, ok2
	}
	switch {
	case over || len(got) > diffLimit:
		n := min(len(got), len(want), diffLimit)
		if err == nil {
			sameBytes(t, "past the limit", got[:n], want[:n])
		}
	case !ok && err == nil:
		t.Fatalf("xz fails, the decoder gives %d bytes and no error", len(got))
	case ok && err != nil:
		t.Fatalf("xz gives %d bytes, the decoder fails: %v", len(want), err)
	case ok:
		sameBytes(t, "against xz", got, want)
	}
}

// xzSeeds are small xz files made at settings that reach every part of
// the decoder: checks none (nothing but the structure guards the data:
// a mutation reaches the decoder's output), CRC32, CRC64, SHA-256; one
// block, several with their sizes, several streams; lc/lp/pb edges;
// small dictionaries.
func xzSeeds(t testing.TB) [][]byte {
	raw := image(40_000, 21)
	raw = append(raw, raw[:9000]...)
	var seeds [][]byte
	for _, cmd := range []string{
		`xz -T1 -0 --check=none -c "$IN" > "$OUT"`,
		`xz -T2 --block-size=7000 --check=none --lzma2=lc=0,lp=4,pb=4,dict=4KiB -c "$IN" > "$OUT"`,
		`xz -T1 --block-size=9000 --check=none --lzma2=lc=4,lp=0,pb=0 -c "$IN" > "$OUT"`,
		`xz -T2 --block-size=20000 --check=crc32 -6 -c "$IN" > "$OUT"`,
		`xz -T1 --check=crc64 -9e -c "$IN" > "$OUT"`,
		`xz -T1 --check=sha256 --lzma2=preset=1,mf=hc3 -c "$IN" > "$OUT"`,
		`{ head -c 5000 "$IN" | xz -T1 --check=none; printf '\0\0\0\0'; tail -c +5001 "$IN" | xz -T2 --block-size=10000 --check=none; } > "$OUT"`,
	} {
		seeds = append(seeds, compress(t, raw, cmd))
	}
	// Incompressible data: xz stores it in uncompressed chunks, next
	// to compressed ones.
	noise := image(1, 3)
	for i := 0; i < 3; i++ {
		noise = append(noise, image(30_000, uint64(i)+40)...)
	}
	seeds = append(seeds, compress(t, noise, `xz -T1 --check=none -0 -c "$IN" > "$OUT"`))
	return seeds
}

// TestXzDiffSeeds: the seeds, and each with one byte changed at many
// places, decode as xz -dc decodes them.
func TestXzDiffSeeds(t *testing.T) {
	need(t, "xz")
	for i, packed := range xzSeeds(t) {
		diffXz(t, packed, false)
		step := max(len(packed)/40, 1)
		for at := 0; at < len(packed); at += step {
			bad := append([]byte(nil), packed...)
			bad[at] ^= byte(at*7 + i + 1)
			t.Run(fmt.Sprintf("seed%d-at%d", i, at), func(t *testing.T) { diffXz(t, bad, true) })
		}
	}
}

// FuzzXzDiff: whatever the input, unpack never succeeds where xz -dc
// fails, and where both succeed they give the same bytes.
//
//	GOMAXPROCS=1 go test -run - -fuzz FuzzXzDiff -parallel 1 -fuzztime 3m ./unpack/
func FuzzXzDiff(f *testing.F) {
	need(f, "xz")
	for _, s := range xzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, packed []byte) {
		diffXz(t, packed, true)
	})
}

// FuzzLZMA2Diff: raw LZMA2 data decodes as xz --format=raw decodes it,
// or both fail.
//
//	GOMAXPROCS=1 go test -run - -fuzz FuzzLZMA2Diff -parallel 1 -fuzztime 3m ./unpack/
func FuzzLZMA2Diff(f *testing.F) {
	need(f, "xz")
	raw := image(30_000, 9)
	raw = append(raw, raw[:5000]...)
	for _, set := range []string{"preset=0", "lc=0,lp=4,pb=4", "lc=4,lp=0,pb=0", "dict=4KiB", "preset=9e,dict=64KiB"} {
		f.Add(rawLZMA2(f, raw, set))
	}
	f.Add(rawLZMA2(f, image(50_000, 77), "preset=0"))
	f.Add([]byte{0xE0, 0, 3, 0, 5, 0x5D, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x01, 0, 3, 'a', 'b', 'c', 'd', 0x02, 0, 0, 'e', 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		diffLZMA2(t, in, "64KiB", 64<<10)
	})
}
