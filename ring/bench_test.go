package ring

import (
	"fmt"
	"testing"
)

// BenchmarkNop measures submit+reap throughput of NOPs, the ring's own
// overhead without any I/O, in batches of 1 and 32.
func BenchmarkNop(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			r := newRing(b, 64, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun | FlagTaskrunFlag})
			var cqes [64]CQE
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				for i := 0; i < batch; i++ {
					r.GetSQE().PrepNop()
				}
				if _, err := r.SubmitAndWait(uint32(batch)); err != nil {
					b.Fatal(err)
				}
				n, err := r.PeekBatch(cqes[:])
				if err != nil || n != batch {
					b.Fatalf("PeekBatch = %d, %v; want %d", n, err, batch)
				}
				r.CQAdvance(n)
			}
		})
	}
}
