package nbd

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Client is an open NBD export over one or more connections. Submit and
// Reap are its asynchronous interface, for one driving goroutine (Submit
// may also be called from several); ReadAt, WriteAt, Zero, Trim, Flush
// and Extents are synchronous helpers built on Submit, safe for
// concurrent use, whose completions never reach Reap.
type Client struct {
	addr  Address
	tls   *tls.Config // from addr.TLS, nil in the clear
	info  Info
	opt   Options
	conns []*conn
	q     *queue
	peer  Peer // the first connection's

	mu     sync.Mutex
	err    error // first fatal error: the client is dead
	closed bool
}

// Dial opens the export an NBD URI names (see ParseURI).
func Dial(ctx context.Context, uri string, opt Options) (*Client, error) {
	a, err := ParseURI(uri)
	if err != nil {
		return nil, &Error{Op: "connect", URI: uri, Err: err}
	}
	return DialAddress(ctx, a, opt)
}

// DialAddress opens an export at a parsed Address: it connects, runs the
// handshake, and, when opt.Connections > 1 and the server advertises
// CAN_MULTI_CONN, opens the other connections, which must agree with the
// first on size, flags and block sizes.
func DialAddress(ctx context.Context, a Address, opt Options) (*Client, error) {
	opt = opt.withDefaults()
	cl := &Client{addr: a, opt: opt, q: newQueue()}
	if a.TLS != nil {
		var err error
		if cl.tls, err = a.TLS.config(); err != nil {
			return nil, &Error{Op: "connect", URI: a.URI, Errno: errnoOf(err), Err: fmt.Errorf("TLS: %w", err)}
		}
	}
	n, err := cl.dialOne(ctx)
	if err != nil {
		return nil, err
	}
	cl.setInfo(n)
	want := opt.Connections
	if want > 1 && !cl.info.CanMultiConn() {
		cl.info.Note = fmt.Sprintf("%d connections asked for, 1 used: the server does not advertise CAN_MULTI_CONN", want)
		want = 1
	}
	for len(cl.connections()) < want {
		n2, err := cl.dialOne(ctx)
		if err == nil && !sameExport(n, n2) {
			err = &Error{Op: "handshake", URI: a.URI, Err: protoErrorf("connection %d sees a different export (size, flags or block size) than the first", len(cl.conns))}
		}
		if err != nil {
			cl.Close()
			return nil, err
		}
	}
	cl.info.Connections = len(cl.conns)
	return cl, nil
}

// resolveError says a dial that failed on the host's name so, wrapping
// ErrResolve and the resolver's error; other errors are returned as they
// are.
func resolveError(err error) error {
	var dns *net.DNSError
	if !errors.As(err, &dns) {
		return err
	}
	return fmt.Errorf("%w %s: %w", ErrResolve, dns.Name, dns)
}

// dialOne connects and negotiates one connection, bounded by the dial and
// handshake timeouts and by ctx.
func (cl *Client) dialOne(ctx context.Context) (negotiated, error) {
	d := net.Dialer{Timeout: cl.opt.DialTimeout}
	nc, err := d.DialContext(ctx, cl.addr.Network, cl.addr.Addr)
	if err != nil {
		return negotiated{}, &Error{Op: "connect", URI: cl.addr.URI, Errno: errnoOf(err), Err: resolveError(err)}
	}
	if len(cl.connections()) == 0 {
		cl.peer = peerOf(cl.addr.Network, nc)
	}
	nc.SetDeadline(time.Now().Add(cl.opt.HandshakeTimeout))
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	h := handshake{nc: nc, tls: cl.tls, r: bufio.NewReaderSize(nc, 64<<10), name: cl.addr.Export, opt: cl.opt}
	n, err := h.run()
	nc, r := h.nc, h.r // on TLS once it started
	var ne net.Error
	switch {
	case !stop():
		err = fmt.Errorf("handshake interrupted: %w", ctx.Err())
	case errors.As(err, &ne) && ne.Timeout():
		err = fmt.Errorf("%w: the handshake took longer than %v (%v)", ErrTimeout, cl.opt.HandshakeTimeout, err)
	case err == nil:
		err = checkExport(n)
	}
	if err != nil {
		nc.Close()
		return n, &Error{Op: "handshake", URI: cl.addr.URI, Errno: errnoOf(err), Err: err}
	}
	nc.SetDeadline(time.Time{})
	cl.mu.Lock()
	cl.conns = append(cl.conns, newConn(cl, nc, r, n, cl.opt.Timeout))
	cl.mu.Unlock()
	return n, nil
}

// checkExport refuses what we cannot address: an export larger than int64.
func checkExport(n negotiated) error {
	if n.export.size > 1<<63-1 {
		return protoErrorf("export size %d does not fit in int64", n.export.size)
	}
	return nil
}

func sameExport(a, b negotiated) bool {
	return a.export == b.export && a.block == b.block && a.structured == b.structured && a.contexts.has == b.contexts.has
}

func (cl *Client) setInfo(n negotiated) {
	cl.info = Info{
		Export:      cl.addr.Export,
		Size:        int64(n.export.size),
		Flags:       TxFlags(n.export.flags),
		BlockSize:   n.block.effective(),
		Structured:  n.structured,
		BlockStatus: n.contexts.has[ctxAllocation],
	}
	if n.contexts.has[ctxBitmap] {
		cl.info.DirtyBitmap = cl.opt.DirtyBitmap
	}
}

// Info describes the export.
func (cl *Client) Info() Info { return cl.info }

// URI is the export's URI as given.
func (cl *Client) URI() string { return cl.addr.URI }

// Reap waits until at least atLeast completions of Submitted requests are
// available and moves up to len(out) of them into out. A positive timeout
// bounds the wait: it then returns what it has with
// os.ErrDeadlineExceeded. Asking for more completions than requests in
// flight returns an error at once rather than waiting forever; without a
// timeout the wait is still bounded, by Options.Timeout on every
// connection. Reap is for one goroutine at a time.
func (cl *Client) Reap(out []Completion, atLeast int, timeout time.Duration) (int, error) {
	return cl.q.reap(out, atLeast, timeout)
}

// Close waits for the requests in flight (at most Options.Timeout, or 30s
// without one), sends NBD_CMD_DISC on every connection, and closes them.
// Completions of requests still in flight then report ErrClosed.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	cl.mu.Unlock()
	wait := cl.opt.Timeout
	if wait <= 0 {
		wait = 30 * time.Second
	}
	cl.drain(wait)
	var wg sync.WaitGroup
	for _, c := range cl.connections() {
		wg.Add(1)
		go func() { defer wg.Done(); c.disconnect(wait) }()
	}
	wg.Wait()
	return nil
}

// drain waits until no connection has requests in flight. It polls: Close
// runs once, and a 2ms tick costs nothing next to a disconnect.
func (cl *Client) drain(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		idle := true
		for _, c := range cl.connections() {
			idle = idle && c.idle()
		}
		if idle {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// connDied makes one connection's death the client's: the engine counts
// on every connection, so the others are failed too.
func (cl *Client) connDied(err error) {
	cl.mu.Lock()
	first := cl.err == nil
	if first {
		cl.err = err
	}
	cl.mu.Unlock()
	conns := cl.connections()
	if !first {
		return
	}
	for _, c := range conns {
		c.fail(fmt.Errorf("another connection to the server failed: %w", err))
	}
}

func (cl *Client) connections() []*conn {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.conns
}

// alive returns the error that makes the client unusable, if any.
func (cl *Client) alive() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	switch {
	case cl.err != nil:
		return cl.err
	case cl.closed:
		return ErrClosed
	}
	return nil
}
