package httpobj

import (
	"context"
	"math/rand/v2"
	"time"
)

// retry decides after the tries-th failed attempt f of op at off: nil to
// try again (after the wait it slept), or the error that ends op.
func (o *Object) retry(op string, off int64, f *failure, tries int) error {
	if err := o.ctx.Err(); err != nil {
		return o.stopped(op, off, tries)
	}
	if !f.transient() || tries > o.s.Retries {
		return f.errorOf(op, o.name, off, tries)
	}
	wait := o.backoff(tries, f.retryWait)
	o.s.Logf("%s %s at offset %d: %s; retry %d of %d in %v", op, o.name, off, f.describe(), tries, o.s.Retries, wait.Round(time.Millisecond))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-o.ctx.Done():
		return o.stopped(op, off, tries)
	}
}

// stopped is the error of an op the object's context ended.
func (o *Object) stopped(op string, off int64, tries int) error {
	return &Error{Op: op, URL: o.name, Off: off, Attempts: tries, Kind: context.Cause(o.ctx)}
}

// backoff is the wait before retry number tries: RetryWait doubled each
// time, capped at MaxWait, half of it random ("equal jitter": ranges that
// failed together do not come back together), or the server's Retry-After
// when longer, capped too.
func (o *Object) backoff(tries int, retryAfter time.Duration) time.Duration {
	d := o.s.RetryWait
	for i := 1; i < tries && d < o.s.MaxWait; i++ {
		d *= 2
	}
	d = min(d, o.s.MaxWait)
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = min(retryAfter, o.s.MaxWait)
	}
	return d
}
