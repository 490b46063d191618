package httpobj

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/delayproxy"
	"github.com/ringcp/ringcp/internal/webtest"
)

// BenchmarkRangedRead reads a 128 MiB file from nginx in 8 MiB ranges
// (the copy's default block), Connections of them at once, on loopback
// and through a proxy that adds a 20 ms round trip (and a 4 MiB window
// per connection, as Linux's receive autotuning reaches). It chose
// DefaultConnections:
//
//	go test -run - -bench RangedRead -benchtime 5x -count 5 ./httpobj/
//
// Figures (MB/s, median of 3 runs of 3 reads; nginx 1.22, Linux 6.18,
// 2 cores shared with other work: load average 15-25, so every figure is
// CPU-bound and low, and the proxy's CPU is ours):
//
//	connections    1     2     4     8    16    32
//	loopback     363   387   508   687   598   391
//	rtt 20 ms    114   174   203   251   267   196
//
// 8 is the best on loopback and within noise of the best at 20 ms, where
// one connection is bound by its window and request round trips and 8
// hide both; past 8 the buffers (8 MiB each) and the scheduling cost more
// than they bring here, and every connection is one more a server holds
// for us (aria2c's -x allows at most 16).
func BenchmarkRangedRead(b *testing.B) {
	const size = 128 << 20
	const chunk = 8 << 20
	root := b.TempDir()
	writeFile(b, root, "obj", pattern(size, 30))
	s := webtest.Nginx(b, root, webtest.Config{})
	for _, rtt := range []time.Duration{0, 20 * time.Millisecond} {
		addr := s.Addr
		if rtt > 0 {
			p, err := delayproxy.Start(s.Addr, rtt, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close() })
			addr = p.Addr()
		}
		for _, conns := range []int{1, 2, 4, 8, 16, 32} {
			b.Run(fmt.Sprintf("rtt=%v/conns=%d", rtt, conns), func(b *testing.B) {
				benchRead(b, "http://"+addr+"/obj", conns, chunk)
			})
		}
	}
}

// benchRead reads the object at url whole, b.N times, conns ranges of
// chunk bytes in flight, into buffers reused between ranges.
func benchRead(b *testing.B, url string, conns, chunk int) {
	o, err := Open(context.Background(), url, Options{Connections: conns})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	bufs := make([][]byte, conns)
	for i := range bufs {
		bufs[i] = make([]byte, chunk)
	}
	b.SetBytes(o.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := readWith(o, bufs); err != nil {
			b.Fatal(err)
		}
	}
}

// readWith reads every range of o with a goroutine per buffer, each
// reusing its own: what a copy's slots do.
func readWith(o *Object, bufs [][]byte) error {
	var next int64
	var mu sync.Mutex
	errs := make(chan error, len(bufs))
	for _, buf := range bufs {
		go func() {
			chunk := len(buf)
			for {
				mu.Lock()
				off := next
				next += int64(chunk)
				mu.Unlock()
				if off >= o.Size() {
					errs <- nil
					return
				}
				n := min(int64(chunk), o.Size()-off)
				if _, err := o.ReadAt(buf[:n], off); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range bufs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
