package stream

import (
	"io"
	"sync/atomic"
)

// Counter counts the bytes read through it; Count may be called from
// another goroutine (progress) while reads go on.
type Counter struct {
	r io.Reader
	n atomic.Int64
}

// NewCounter counts what is read from r.
func NewCounter(r io.Reader) *Counter { return &Counter{r: r} }

func (c *Counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Count is how many bytes were read.
func (c *Counter) Count() int64 { return c.n.Load() }
