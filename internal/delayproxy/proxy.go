package delayproxy

import (
	"net"
	"sync"
	"time"
)

// DefaultWindow is the bytes one direction of one connection keeps in
// flight. 4 MiB is what Linux's receive-window autotuning reaches with the
// default net.ipv4.tcp_rmem maximum (6 MiB, about two thirds of it
// advertised): over 20 ms that is 200 MiB/s for one connection.
const DefaultWindow = 4 << 20

// Proxy forwards connections made to Addr to a target, RTT later.
type Proxy struct {
	ln     net.Listener
	target string
	rtt    time.Duration
	window int

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	accepted int
	closed   bool
	wg       sync.WaitGroup
}

// Start listens on a free loopback port and forwards every connection to
// target (host:port) with rtt added to each round trip, window bytes in
// flight per direction (DefaultWindow when 0).
func Start(target string, rtt time.Duration, window int) (*Proxy, error) {
	if window <= 0 {
		window = DefaultWindow
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, rtt: rtt, window: window, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the host:port clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is how many connections clients made through the proxy (a
// test of keep-alive counts them).
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops listening, cuts every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(down)
	}
}

// track remembers c for Close; false when the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// serve connects down to the target (after half a round trip, as a SYN
// would arrive) and pipes both ways until either side closes.
func (p *Proxy) serve(down net.Conn) {
	defer p.wg.Done()
	if !p.track(down) {
		down.Close()
		return
	}
	defer p.untrack(down)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); p.pipe(up, down) }()
	go func() { defer both.Done(); p.pipe(down, up) }()
	both.Wait()
}

// chunk is n bytes read at one time into buf, due at the other side at
// due.
type chunk struct {
	buf *[]byte
	n   int
	due time.Time
}

// bufs recycles chunks' buffers: at hundreds of MB/s, fresh ones would
// keep the garbage collector busy in a benchmark that measures the client.
var bufs = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}

// window counts one direction's bytes read and not yet acknowledged.
type window struct {
	mu       sync.Mutex
	freed    sync.Cond
	inflight int
	max      int
}

// take waits until fewer than max bytes are in flight and returns how many
// more may be read.
func (w *window) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.inflight >= w.max {
		w.freed.Wait()
	}
	return w.max - w.inflight
}

func (w *window) add(n int) {
	w.mu.Lock()
	w.inflight += n
	w.mu.Unlock()
}

func (w *window) ack(n int) {
	w.mu.Lock()
	w.inflight -= n
	w.mu.Unlock()
	w.freed.Broadcast()
}

// pipe copies src to dst, each chunk half a round trip late, with at most
// the window's bytes read and not yet acknowledged (a round trip after
// reading). It returns once the last chunk is out: dst's write side is
// then shut, as src's was; when dst fails, src is closed so that the
// other direction ends too.
func (p *Proxy) pipe(dst, src net.Conn) {
	w := &window{max: p.window}
	w.freed.L = &w.mu
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.deliver(dst, src, queue, w)
	}()
	for {
		buf := bufs.Get().(*[]byte)
		n, err := src.Read((*buf)[:min(len(*buf), w.take())])
		if n > 0 {
			w.add(n)
			queue <- chunk{buf: buf, n: n, due: time.Now().Add(p.rtt / 2)}
		}
		if n == 0 {
			bufs.Put(buf)
		}
		if err != nil {
			close(queue)
			<-done
			return
		}
	}
}

// deliver writes each chunk when it is due and acknowledges it a further
// half round trip later (the ACK's way back).
func (p *Proxy) deliver(dst, src net.Conn, queue <-chan chunk, w *window) {
	failed := false
	for c := range queue {
		time.Sleep(time.Until(c.due))
		if !failed {
			if _, err := dst.Write((*c.buf)[:c.n]); err != nil {
				failed = true
				src.Close()
			}
		}
		bufs.Put(c.buf)
		n := c.n
		time.AfterFunc(p.rtt/2, func() { w.ack(n) })
	}
	if tc, ok := dst.(*net.TCPConn); ok && !failed {
		tc.CloseWrite()
	}
}
