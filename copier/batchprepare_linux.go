package copier

import (
	"fmt"
	"sync/atomic"

	"github.com/ringcp/ringcp/align"
	"golang.org/x/time/rate"
)

// PrepareAll checks every job as Prepare does, then what no single job
// can see: two jobs writing one DST; a job's DST that is, or overlaps
// (through partitions and loop devices), another job's SRC; jobs whose
// files do not fit on their filesystem together (unless Force). It
// writes nothing. Any refusal refuses the batch: a *BatchError (Refused)
// naming every refused job. A job's Options.Progress, when nil, is given
// one, for Status.
func PrepareAll(opts []Options, bo BatchOptions) (*Batch, error) {
	if len(opts) == 0 {
		return nil, refuse(KindBadInput, "", "a batch needs at least one job")
	}
	if bo.Parallel < 0 {
		return nil, refuse(KindBadInput, "", fmt.Sprintf("BatchOptions.Parallel %d: must be 0 (all at once) or more", bo.Parallel))
	}
	switch {
	case bo.MaxRate < 0:
		return nil, refuse(KindBadInput, "", fmt.Sprintf("BatchOptions.MaxRate %d: must be 0 (no cap) or more", bo.MaxRate))
	case bo.MaxRate > 0 && bo.Rate != nil:
		return nil, refuse(KindBadInput, "", "BatchOptions.MaxRate and a limiter of the caller's (BatchOptions.Rate): give one, not both")
	}
	b := &Batch{Plans: make([]*Plan, len(opts)), rate: bo.Rate, state: make([]atomic.Int32, len(opts)), noReserve: map[*Plan]bool{}}
	var refused []*JobError
	stdin := -1
	for i, o := range opts {
		if o.Dst == streamOperand {
			refused = append(refused, &JobError{Index: i, Err: refuse(KindNotSupported, "", "writes standard output: a batch's jobs run side by side and would mix their bytes there; give each job a file").on("Dst")})
			continue
		}
		if o.Src == streamOperand && stdin >= 0 {
			// Never inspected: a look at standard input takes its first
			// bytes, which the earlier job needs.
			refused = append(refused, &JobError{Index: i, Err: refuse(KindBadInput, "", fmt.Sprintf("reads standard input, as job %d does: a stream is read once", stdin+1)).on("Src")})
			continue
		} else if o.Src == streamOperand {
			stdin = i
		}
		p, err := Prepare(fitToShared(o, bo.MaxRate))
		if err != nil {
			refused = append(refused, &JobError{Index: i, Err: err})
			continue
		}
		if o.MaxRate == 0 {
			p.gov.setCap(0) // the shared cap applies, not one of its own
		}
		b.Plans[i] = p
	}
	refused = mergeByIndex(mergeByIndex(refused, b.crossCheck()), b.spaceCheck())
	if len(refused) > 0 {
		b.close() // the prepared jobs' connections to NBD ends
		return nil, &BatchError{Jobs: refused, Refused: true}
	}
	b.sizeBudget(bo)
	b.Parallel = bo.Parallel
	if b.Parallel == 0 || b.Parallel > len(opts) {
		b.Parallel = len(opts)
	}
	b.Parallel = min(b.Parallel, b.Slots)
	if bo.Rate != nil && bo.Rate.Limit() != rate.Inf && bo.Rate.Burst() < b.BlockSize {
		b.close()
		return nil, refuse(KindBadInput, "", fmt.Sprintf("the rate cap's burst of %d bytes is smaller than a block (%d)", bo.Rate.Burst(), b.BlockSize))
	}
	if bo.Rate == nil {
		b.gov = newGovernor(bo.MaxRate, b.BlockSize, b.unit(), b.Slots, false, b.depthChosen())
		b.gov.yield = b.yielding()
		b.rate = b.gov.lim
	}
	return b, nil
}

// fitToShared gives a job without a cap of its own the batch's, so that
// Prepare fits its block size and depth to it as to a single copy's
// (fitShare); PrepareAll then lifts the job's own limiter again.
func fitToShared(o Options, shared int64) Options {
	if o.MaxRate == 0 {
		o.MaxRate = shared
	}
	return o
}

// unit is what every job's requests are a multiple of: the shared cap's
// burst never goes below it.
func (b *Batch) unit() int {
	u := int64(1)
	for _, p := range b.Plans {
		u = align.LCM(u, int64(p.unit()))
	}
	return int(u)
}

// close releases what the prepared jobs hold open (Plan.Close).
func (b *Batch) close() {
	for _, p := range b.Plans {
		if p != nil {
			p.Close()
		}
	}
}

// depthChosen: no job asked for a queue depth, so the batch's good
// neighbour sizes the shared budget's bytes in flight.
func (b *Batch) depthChosen() bool {
	for _, p := range b.Plans {
		if p.opts.QueueDepth > 0 {
			return false
		}
	}
	return true
}

// yielding: a job yields (Options.Yield), so the good neighbour of the
// shared budget keeps --yield's smaller share.
func (b *Batch) yielding() bool {
	for _, p := range b.Plans {
		if p.opts.Yield {
			return true
		}
	}
	return false
}

// sizeBudget gives the batch its shared buffers (batchSizes), under the
// cap on the jobs together (bo's), or the sum of the jobs' own caps when
// every job has one and it is less, for bo.Parallel jobs at once (0: all).
func (b *Batch) sizeBudget(bo BatchOptions) {
	jobs := make([]batchJob, len(b.Plans))
	var own int64
	for i, p := range b.Plans {
		jobs[i] = batchJob{block: p.BlockSize, length: p.Length, askDepth: p.opts.QueueDepth}
		if own >= 0 && p.opts.MaxRate > 0 {
			own += p.opts.MaxRate
		} else {
			own = -1 // a job without a cap: the jobs' own caps bound nothing
		}
	}
	capBPS := bo.MaxRate
	if bo.Rate != nil && bo.Rate.Limit() != rate.Inf {
		capBPS = int64(min(float64(bo.Rate.Limit()), 1<<62))
	}
	if own > 0 && (capBPS == 0 || own < capBPS) {
		capBPS = own
	}
	together := bo.Parallel
	if together == 0 {
		together = len(jobs)
	}
	b.BlockSize, b.Slots = batchSizes(jobs, capBPS, together)
}
