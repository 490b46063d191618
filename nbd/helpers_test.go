package nbd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// span is a byte range of a test.
type span struct{ off, n int64 }

// awkward gives ranges with the sizes and offsets that break code: 0, 1,
// 511, 4097, a block plus a byte, odd tails at the export's end.
func awkward(size int64) []span {
	s := []span{{0, 1}, {1, 511}, {511, 4097}, {4095, 4097}, {12345, 1<<20 + 3},
		{size - 1, 1}, {size - 4097, 4097}, {size - 511, 511}, {65536, 65536}, {7, 0}}
	var out []span
	for _, x := range s {
		if x.off >= 0 && x.off+x.n <= size {
			out = append(out, x)
		}
	}
	return out
}

// disjoint gives non-overlapping awkward ranges, for writes in flight
// together.
func disjoint(size int64) []span {
	var out []span
	pos := int64(1)
	for _, n := range []int64{1, 511, 4097, 3, 1<<20 + 3, 65536, 4095, 2} {
		if pos+n > size {
			break
		}
		out = append(out, span{pos, n})
		pos += n + pos%7 + 1
	}
	if size >= 4097 {
		out = append(out, span{size - 4097 + 1, 4096})
	}
	return out
}

// random returns n bytes of a seeded stream.
func random(seed uint64, n int64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeFile writes b to a new file in the test's directory.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// submitAll submits every request at once and reaps every completion,
// failing the test on any error; it returns them by tag.
func submitAll(t *testing.T, c *Client, reqs []Request) map[uint64]Completion {
	t.Helper()
	for _, r := range reqs {
		if err := c.Submit(r); err != nil {
			t.Fatalf("submit %v at %d: %v", r.Op, r.Off, err)
		}
	}
	got := map[uint64]Completion{}
	out := make([]Completion, len(reqs))
	for len(got) < len(reqs) {
		n, err := c.Reap(out, 1, 30*time.Second)
		if err != nil {
			t.Fatalf("reap: %v (have %d of %d)", err, len(got), len(reqs))
		}
		for _, cp := range out[:n] {
			if _, dup := got[cp.Tag]; dup {
				t.Fatalf("two completions for tag %d", cp.Tag)
			}
			got[cp.Tag] = cp
		}
	}
	return got
}

// checkReads reads every span in flight together and compares with want.
func checkReads(t *testing.T, c *Client, want []byte, spans []span) {
	t.Helper()
	var reqs []Request
	for i, s := range spans {
		buf := bytes.Repeat([]byte{0xa5}, int(s.n)) // stale bytes must not survive
		reqs = append(reqs, Request{Op: OpRead, Off: s.off, Buf: buf, Tag: uint64(i)})
	}
	got := submitAll(t, c, reqs)
	for i, s := range spans {
		cp := got[uint64(i)]
		if cp.Err != nil || cp.N != s.n {
			t.Fatalf("read [%d,+%d): n=%d err=%v", s.off, s.n, cp.N, cp.Err)
		}
		if !bytes.Equal(reqs[i].Buf, want[s.off:s.off+s.n]) {
			t.Fatalf("read [%d,+%d): %s", s.off, s.n, firstDiff(reqs[i].Buf, want[s.off:s.off+s.n]))
		}
	}
}

// firstDiff describes where two byte slices part.
func firstDiff(got, want []byte) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at +%d: got 0x%02x want 0x%02x", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// readAll reads the whole export through ReadAt.
func readAll(t *testing.T, c *Client) []byte {
	t.Helper()
	b := make([]byte, c.Info().Size)
	if n, err := c.ReadAt(b, 0); err != nil || n != len(b) {
		t.Fatalf("read all: n=%d err=%v", n, err)
	}
	return b
}
