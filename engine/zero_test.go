package engine

import (
	"math/rand/v2"
	"testing"
)

func TestScanFindsRuns(t *testing.T) {
	const zb = 4096
	z := zeroer{block: zb}
	buf := make([]byte, 10*zb+512)
	for _, i := range []int{0, 3*zb + 7, 4*zb + 100, 9 * zb} {
		buf[i] = 1 // data in blocks 0, 3, 4, 9
	}
	want := []struct {
		end  int
		zero bool
	}{{zb, false}, {3 * zb, true}, {5 * zb, false}, {9 * zb, true}, {10 * zb, false}, {10*zb + 512, true}}
	from := 0
	for i, w := range want {
		end, zero := z.scan(buf, from)
		if end != w.end || zero != w.zero {
			t.Fatalf("segment %d from %d: (%d, %v), want (%d, %v)", i, from, end, zero, w.end, w.zero)
		}
		from = end
	}
	off := &zeroer{}
	if end, zero := off.scan(buf, 0); end != len(buf) || zero {
		t.Fatalf("detection off: (%d, %v), want all data", end, zero)
	}
}

// BenchmarkScan: the zero scan must never bound throughput. Random data
// (the common case) and all zeros (the worst case: every byte looked at).
func BenchmarkScan(b *testing.B) {
	const zb = 4096
	z := zeroer{block: zb}
	data := make([]byte, 8<<20)
	rand.NewChaCha8([32]byte{}).Read(data)
	for name, buf := range map[string][]byte{"random": data, "zeros": make([]byte, 8<<20)} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for range b.N {
				for from := 0; from < len(buf); {
					from, _ = z.scan(buf, from)
				}
			}
		})
	}
}
