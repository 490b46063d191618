package engine

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// The rate cap (Job.Rate) counts the bytes of the range as they are moved:
// a data chunk when its read is sent (what is read is written once), and
// a hole's zeros when they are written as data. Holes that are never read,
// and zeros made by fallocate, cost nothing. A request over the cap is
// not slept on: it waits in the delayed list, like a retry, while the
// engine reaps other completions.

// queueCharged queues the slot's next request, which moves n bytes of the
// range, once the cap allows it.
func (r *run) queueCharged(idx, n int) {
	d, err := r.rateDelay(n)
	switch {
	case err != nil:
		r.fail(err)
		r.release(idx)
	case d > 0:
		r.delayed = append(r.delayed, delayedReq{slot: idx, due: time.Now().Add(d)})
	default:
		r.queue(idx)
	}
}

// rateDelay reserves n bytes from the caps (the job's own and the one it
// shares) and says how long to wait before moving them: the longer of
// their delays.
func (r *run) rateDelay(n int) (time.Duration, error) {
	if n == 0 {
		return 0, nil
	}
	now := time.Now()
	var d time.Duration
	var taken []*rate.Reservation
	for _, lim := range []*rate.Limiter{r.job.Rate, r.job.SharedRate} {
		if lim == nil {
			continue
		}
		res := lim.ReserveN(now, n)
		if !res.OK() {
			for _, t := range taken {
				t.CancelAt(now)
			}
			return 0, fmt.Errorf("engine: a request of %d bytes is over the rate cap's burst of %d: the block size must fit the cap", n, lim.Burst())
		}
		taken = append(taken, res)
		d = max(d, res.DelayFrom(now))
	}
	return d, nil
}
