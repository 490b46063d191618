package nbd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// conn is one transmission-phase connection: a sender goroutine writes
// queued requests (batched into one writev), a reader goroutine decodes
// replies and finishes the requests they answer. Cookies are per
// connection and never reused while in flight.
type conn struct {
	cl      *Client
	nc      net.Conn
	dec     decoder
	timeout time.Duration // progress timeout; <= 0: none

	mu       sync.Mutex
	cond     *sync.Cond // sendq grew, or the connection died
	inflight map[uint64]*wreq
	sendq    []*wreq
	cookie   uint64
	bytes    int64 // bytes in flight, to pick the least busy connection
	dead     error
	closing  bool // DISC queued: EOF is expected
	readerOK chan struct{}
	senderOK chan struct{}
}

func newConn(cl *Client, nc net.Conn, r *bufio.Reader, n negotiated, timeout time.Duration) *conn {
	c := &conn{cl: cl, nc: nc, timeout: timeout, inflight: map[uint64]*wreq{},
		readerOK: make(chan struct{}), senderOK: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	c.dec = decoder{r: r, structured: n.structured, contexts: n.contexts, find: c.find}
	go c.readLoop()
	go c.sendLoop()
	return c
}

// register puts w in flight and queues it for sending. It fails only when
// the connection is dead.
func (c *conn) register(w *wreq) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil {
		return c.dead
	}
	if c.closing {
		return ErrClosed
	}
	if w.cmd == cmdDisc {
		c.closing = true // from now on the server's EOF is expected
	}
	c.cookie++
	w.cookie = c.cookie
	putRequest(w.hdr[:], request{flags: w.flags, cmd: w.cmd, cookie: w.cookie, off: w.off, length: w.length})
	if w.cmd != cmdDisc {
		c.inflight[w.cookie] = w
		c.bytes += int64(w.length)
		if len(c.inflight) == 1 {
			c.armLocked() // the server owes us a reply from now on
		}
	}
	c.sendq = append(c.sendq, w)
	c.cond.Signal()
	return nil
}

func (c *conn) find(cookie uint64) *wreq {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight[cookie]
}

// armLocked sets the read deadline: the server must send a message
// within the timeout while anything is in flight, and may idle otherwise.
func (c *conn) armLocked() {
	if c.timeout <= 0 {
		return
	}
	var t time.Time
	if len(c.inflight) > 0 || c.closing {
		t = time.Now().Add(c.timeout)
	}
	c.nc.SetReadDeadline(t)
}

func (c *conn) readLoop() {
	defer close(c.readerOK)
	for {
		w, err := c.dec.next()
		if err != nil {
			c.fail(c.readFailure(err))
			c.failInflight()
			return
		}
		c.mu.Lock()
		if w != nil {
			delete(c.inflight, w.cookie)
			c.bytes -= int64(w.length)
		}
		c.armLocked()
		c.mu.Unlock()
		if w != nil {
			c.cl.pieceDone(w, nil)
		}
	}
}

// readFailure names why the reply stream stopped.
func (c *conn) readFailure(err error) error {
	c.mu.Lock()
	n, closing := len(c.inflight), c.closing
	c.mu.Unlock()
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF) && closing && n == 0:
		return ErrClosed
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w with %d requests in flight", ErrDisconnected, n)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: no reply for %v with %d requests in flight", ErrTimeout, c.timeout, n)
	}
	return err
}

func (c *conn) sendLoop() {
	defer close(c.senderOK)
	for {
		c.mu.Lock()
		for len(c.sendq) == 0 && c.dead == nil {
			c.cond.Wait()
		}
		if c.dead != nil {
			c.mu.Unlock()
			return
		}
		batch := c.sendq
		c.sendq = nil
		c.mu.Unlock()
		if err := c.send(batch); err != nil {
			c.fail(err)
			return
		}
		if batch[len(batch)-1].cmd == cmdDisc {
			return // nothing may follow NBD_CMD_DISC
		}
	}
}

// send writes a batch of requests with one writev.
func (c *conn) send(batch []*wreq) error {
	bufs := make(net.Buffers, 0, 2*len(batch))
	for _, w := range batch {
		bufs = append(bufs, w.hdr[:])
		if w.cmd == cmdWrite {
			bufs = append(bufs, w.buf[:w.length])
		}
	}
	if c.timeout > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
	}
	// The buffers are the callers' until their replies arrive. A broken
	// server that replies to a write before taking its payload gets
	// whatever the buffer holds by then; that can harm nothing but its
	// own copy.
	_, err := bufs.WriteTo(c.nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: the server took no request bytes for %v", ErrTimeout, c.timeout)
	}
	return err
}

// fail kills the connection: no request is taken any more and the socket
// is closed, which stops the reader, which then fails every request in
// flight with the first error (failInflight). Only the first failure
// counts.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return
	}
	c.dead = err
	c.sendq = nil
	c.cond.Broadcast()
	c.mu.Unlock()
	c.nc.Close()
	if !errors.Is(err, ErrClosed) {
		c.cl.connDied(err)
	}
}

// failInflight finishes every request in flight with the connection's
// error. Only the reader calls it, once it stopped decoding: a request is
// completed only when nothing will write into its buffer any more.
func (c *conn) failInflight() {
	c.mu.Lock()
	lost, err := c.inflight, c.dead
	c.inflight = map[uint64]*wreq{}
	c.bytes = 0
	c.mu.Unlock()
	for _, w := range lost {
		c.cl.pieceDone(w, err)
	}
}

func (c *conn) load() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil {
		return 1 << 62
	}
	return c.bytes
}

func (c *conn) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight) == 0 || c.dead != nil
}

// disconnect sends NBD_CMD_DISC (waiting at most wait for it to go out),
// gives the server a moment to close first, as the spec has it, and closes
// the socket.
func (c *conn) disconnect(wait time.Duration) {
	if c.register(&wreq{cmd: cmdDisc}) == nil {
		select {
		case <-c.senderOK:
		case <-time.After(wait):
		}
		select {
		case <-c.readerOK:
		case <-time.After(time.Second):
		}
	}
	c.fail(ErrClosed)
	<-c.readerOK
	<-c.senderOK
}
