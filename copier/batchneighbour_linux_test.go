package copier_test

import (
	"context"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// TestBatchNeighbourAlone: three jobs of a batch on a file system of
// their own (a loop device nobody else uses), no queue depth given: the
// jobs are one copy on one budget, not one another's others, so the
// good neighbour keeps every slot, and learns its speed alone. Before,
// each job's watcher counted the other jobs' requests as others': the
// batch grew from 128 KiB, never learnt its speed alone, and said it
// was held back by others' I/O down to 10% of it. Both engines; every
// DST byte for byte.
func TestBatchNeighbourAlone(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dev, _ := blocktest.Device(t, 1<<30, "--direct-io=on")
			// No background initialisation: the jobs alone use the disk.
			blocktest.Mkfs(t, dev, "ext4", "-E", "lazy_itable_init=0,lazy_journal_init=0")
			dir := blocktest.Mount(t, dev, "ext4", 0)
			jobs := fileJobs(t, dir, 96<<20, 96<<20+4097, 96<<20+511)
			unix.Sync() // nor the writeback of SRC
			b := prepareBatch(t, jobs, copier.BatchOptions{}, func(o *copier.Options) { o.Engine = eng })
			rep, err := b.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				compareFile(t, j.opts.Dst, j.want)
			}
			n := rep.Neighbour
			if n == nil {
				t.Fatal("no queue depth given, and no good neighbour in the report")
			}
			t.Logf("%.2f s: %s", rep.Seconds, n)
			if n.Samples > 4 && (n.OthersSeconds > rep.Seconds/4 || n.SoloRate == 0) {
				t.Errorf("alone on its disk: others seen %.2f s of %.2f, solo rate %.0f: the jobs took one another for others", n.OthersSeconds, rep.Seconds, n.SoloRate)
			}
		})
	}
}
