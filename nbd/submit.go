package nbd

import (
	"fmt"
	"syscall"
)

// Submit starts req and returns at once; its Completion comes from Reap.
// A request longer than the server takes in one go is split into several
// wire requests (on several connections when there are) and completes
// once, when all are done. A request the server could not accept is
// refused here, with nothing sent: an unknown op, an op or flag the
// server did not advertise (EOPNOTSUPP), a write to a read-only export
// (EPERM), a range outside the export or not aligned to the minimum block
// size (EINVAL). After the connection died Submit returns its error.
// When Submit returns nil, exactly one Completion for req.Tag follows.
func (cl *Client) Submit(req Request) error {
	if req.Op < OpRead || req.Op > OpFlush {
		return cl.refuse(req, syscall.EINVAL, fmt.Sprintf("unknown op %d", req.Op))
	}
	return cl.start(req, nil)
}

func (cl *Client) start(req Request, private chan Completion) error {
	if err := cl.alive(); err != nil {
		return &Error{Op: req.Op.String(), URI: cl.addr.URI, Offset: req.Off, Length: req.length(), Errno: errnoOf(err), Err: err}
	}
	if err := cl.validate(req); err != nil {
		return err
	}
	pieces := cl.split(req)
	o := &op{req: req, left: len(pieces), private: private}
	if private == nil {
		cl.q.submitted()
	}
	if len(pieces) == 0 {
		cl.finish(o)
		return nil
	}
	for i, w := range pieces {
		w.parent = o
		err := cl.pick().register(w)
		if err == nil {
			continue
		}
		if i == 0 {
			if private == nil {
				cl.q.unsubmit()
			}
			return &Error{Op: req.Op.String(), URI: cl.addr.URI, Offset: req.Off, Length: req.length(), Errno: errnoOf(err), Err: err}
		}
		// Some pieces are on the wire: the op completes through them.
		for _, rest := range pieces[i:] {
			cl.pieceDone(rest, err)
		}
		return nil
	}
	return nil
}

// validate refuses what the server did not offer or would reject.
func (cl *Client) validate(req Request) error {
	in := cl.info
	need := map[Op]TxFlags{OpFlush: FlagSendFlush, OpTrim: FlagSendTrim, OpZero: FlagSendWriteZeroes}
	n := req.length()
	switch {
	case need[req.Op] != 0 && !in.Flags.Has(need[req.Op]):
		return cl.refuse(req, syscall.EOPNOTSUPP, "the server does not offer "+req.Op.String())
	case req.Op == opBlockStatus && !in.BlockStatus && in.DirtyBitmap == "":
		return cl.refuse(req, syscall.EOPNOTSUPP, "no metadata context was negotiated")
	case in.ReadOnly() && (req.Op == OpWrite || req.Op == OpZero || req.Op == OpTrim):
		return cl.refuse(req, syscall.EPERM, "the export is read-only")
	case req.Off < 0 || n < 0 || req.Off > in.Size || n > in.Size-req.Off:
		return cl.refuse(req, syscall.EINVAL, fmt.Sprintf("range outside the export of %d bytes", in.Size))
	}
	if err := cl.checkFlags(req); err != nil {
		return err
	}
	bs := int64(in.BlockSize.Min)
	if req.Off%bs != 0 || (n%bs != 0 && req.Off+n != in.Size) {
		return cl.refuse(req, syscall.EINVAL, fmt.Sprintf("not aligned to the server's minimum block size %d", bs))
	}
	return nil
}

func (cl *Client) checkFlags(req Request) error {
	f := req.Flags
	switch {
	case f&^(FUA|NoHole|FastZero) != 0:
		return cl.refuse(req, syscall.EINVAL, fmt.Sprintf("unknown flags 0x%x", uint8(f)))
	case f&FUA != 0 && !cl.info.CanFUA():
		return cl.refuse(req, syscall.EOPNOTSUPP, "the server does not offer FUA")
	case f&FUA != 0 && req.Op != OpWrite && req.Op != OpZero && req.Op != OpTrim:
		return cl.refuse(req, syscall.EINVAL, "FUA is for writes, zeroes and trims")
	case f&(NoHole|FastZero) != 0 && req.Op != OpZero:
		return cl.refuse(req, syscall.EINVAL, "NoHole and FastZero are for OpZero")
	case f&FastZero != 0 && !cl.info.CanFastZero():
		return cl.refuse(req, syscall.EOPNOTSUPP, "the server does not offer fast zero")
	}
	return nil
}

func (cl *Client) refuse(req Request, errno syscall.Errno, why string) error {
	return &Error{Op: req.Op.String(), URI: cl.addr.URI, Offset: req.Off, Length: req.length(), Errno: errno,
		Err: fmt.Errorf("refused before sending: %s", why)}
}

// split cuts req into wire requests: reads and writes of at most
// BlockSize.Max bytes, the others of at most maxEffectCap (both are
// multiples of the minimum block size, so every piece stays aligned).
func (cl *Client) split(req Request) []*wreq {
	flags := wireFlags(req.Flags)
	if req.Op == OpFlush {
		return []*wreq{{cmd: cmdFlush}}
	}
	step := int64(maxEffectCap)
	if req.Op == OpRead || req.Op == OpWrite {
		step = int64(cl.info.BlockSize.Max)
	}
	n := req.length()
	var out []*wreq
	for pos := int64(0); pos < n; pos += step {
		l := min(step, n-pos)
		w := &wreq{cmd: req.Op.cmd(), flags: flags, off: uint64(req.Off + pos), length: uint32(l)}
		if req.Buf != nil {
			w.buf = req.Buf[pos : pos+l]
		}
		out = append(out, w)
	}
	return out
}

func wireFlags(f ReqFlags) uint16 {
	var w uint16
	if f&FUA != 0 {
		w |= cmdFlagFUA
	}
	if f&NoHole != 0 {
		w |= cmdFlagNoHole
	}
	if f&FastZero != 0 {
		w |= cmdFlagFastZero
	}
	return w
}

// pick chooses the connection with the fewest bytes in flight.
func (cl *Client) pick() *conn {
	conns := cl.connections()
	best, load := conns[0], conns[0].load()
	for _, c := range conns[1:] {
		if l := c.load(); l < load {
			best, load = c, l
		}
	}
	return best
}

// pieceDone records one finished wire request (fail is set when the
// connection died under it) and completes its op after the last piece.
func (cl *Client) pieceDone(w *wreq, fail error) {
	o := w.parent
	o.mu.Lock()
	switch {
	case o.err != nil:
	case fail != nil:
		o.err = cl.pieceError(o, w, errnoOf(fail), "", fail)
	case w.errno != 0:
		o.err = cl.pieceError(o, w, w.errno, w.msg, nil)
	case w.cmd == cmdBlockStatus:
		o.status = w.status
	}
	o.left--
	last := o.left == 0
	o.mu.Unlock()
	if w.errno == syscall.ESHUTDOWN {
		cl.serverShutdown()
	}
	if last {
		cl.finish(o)
	}
}

func (cl *Client) pieceError(o *op, w *wreq, errno syscall.Errno, msg string, cause error) *Error {
	return &Error{Op: o.req.Op.String(), URI: cl.addr.URI, Offset: int64(w.off), Length: int64(w.length),
		Errno: errno, Msg: msg, Err: cause}
}

// finish delivers op's completion: to the helper waiting on it, or to
// the queue Reap reads.
func (cl *Client) finish(o *op) {
	c := Completion{Tag: o.req.Tag, status: o.status}
	if o.err != nil {
		c.Errno, c.Err = o.err.Errno, o.err
	} else {
		c.N = o.req.length()
	}
	if o.private != nil {
		o.private <- c // buffered: the helper may not be waiting yet
		return
	}
	cl.q.push(c)
}

// serverShutdown: the spec says a client that gets NBD_ESHUTDOWN MUST
// disconnect; new requests fail, those in flight finish, Close sends DISC.
func (cl *Client) serverShutdown() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.err == nil {
		cl.err = fmt.Errorf("the server is shutting down (NBD_ESHUTDOWN)")
	}
}
