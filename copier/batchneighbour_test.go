package copier_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestBatchNeighbourReport: a batch whose jobs gave no queue depth has its
// bytes in flight sized by one good neighbour on the shared budget (issue
// 27), and the batch's report says what it chose, as a single copy's
// does; a batch given a depth reports none. The cap only makes the copy
// last long enough for samples. Every DST byte for byte, both engines.
func TestBatchNeighbourReport(t *testing.T) {
	uringtest.NeedOn(t)
	const capBPS = 8 << 20
	for _, eng := range engines {
		for _, depth := range []int{0, 4} {
			t.Run(fmt.Sprintf("%s/q%d", eng, depth), func(t *testing.T) {
				jobs := fileJobs(t, t.TempDir(), 4<<20+4097, 3<<20+511, 1)
				b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: capBPS}, func(o *copier.Options) {
					o.Engine, o.QueueDepth = eng, depth
				})
				rep, err := b.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range jobs {
					compareFile(t, j.opts.Dst, j.want)
				}
				switch {
				case depth > 0 && rep.Neighbour != nil:
					t.Errorf("queue depth %d given: the batch reports a good neighbour %+v", depth, *rep.Neighbour)
				case depth == 0 && (rep.Neighbour == nil || rep.Neighbour.Samples == 0):
					t.Errorf("no queue depth given, %.1f s: the batch does not say what its good neighbour chose (%+v)", rep.Seconds, rep.Neighbour)
				}
			})
		}
	}
}
