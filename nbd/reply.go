package nbd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// wreq is one request on the wire, from send to its final reply.
type wreq struct {
	cookie uint64
	cmd    uint16
	flags  uint16
	off    uint64
	length uint32
	buf    []byte // read: where the data goes; write: the payload
	hdr    [requestHeaderLen]byte

	// Filled in by the decoder from the reply.
	cover     coverage                    // read: bytes the chunks described
	errno     syscall.Errno               // first error the server reported
	msg       string                      // its message
	status    [numContexts][]statusExtent // block status, by context
	gotStatus [numContexts]bool

	parent *op // the caller's request this is a piece of
}

// decoder reads reply messages of the transmission phase. It checks every
// message against the request it answers and never writes outside that
// request's buffer; any violation is an error wrapping ErrProtocol.
type decoder struct {
	r          *bufio.Reader
	structured bool
	contexts   contextIDs                // the metadata contexts selected on this connection
	find       func(cookie uint64) *wreq // the request in flight, or nil
	hdr        [chunkHeaderLen]byte
	scratch    []byte
}

// next reads one message (a simple reply or one structured chunk) and
// returns the request it finished, or nil when more chunks follow. An
// io.EOF return means the stream ended cleanly between messages.
func (d *decoder) next() (*wreq, error) {
	if _, err := io.ReadFull(d.r, d.hdr[:4]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, readErr("a reply header", err)
	}
	switch m := be.Uint32(d.hdr[:]); m {
	case magicSimple:
		return d.simple()
	case magicStructured:
		return d.chunk()
	default:
		return nil, protoErrorf("reply magic 0x%08x (neither simple 0x%08x nor structured 0x%08x)", m, magicSimple, magicStructured)
	}
}

func (d *decoder) simple() (*wreq, error) {
	if _, err := io.ReadFull(d.r, d.hdr[4:simpleHeaderLen]); err != nil {
		return nil, readErr("a simple reply header", err)
	}
	errno, cookie := be.Uint32(d.hdr[4:]), be.Uint64(d.hdr[8:])
	w := d.find(cookie)
	if w == nil {
		return nil, protoErrorf("simple reply for unknown cookie %d", cookie)
	}
	if errno != 0 {
		// No payload follows an error, even for a read.
		w.errno = errnoFromWire(errno)
		return w, nil
	}
	switch {
	case w.cmd == cmdBlockStatus:
		return nil, protoErrorf("simple success reply to block status (cookie %d), which needs a structured reply", cookie)
	case w.cmd == cmdRead && d.structured:
		return nil, protoErrorf("simple success reply to a read (cookie %d) after structured replies were negotiated", cookie)
	case w.cmd == cmdRead:
		if _, err := io.ReadFull(d.r, w.buf[:w.length]); err != nil {
			return nil, readErr(fmt.Sprintf("the %d bytes of a read reply", w.length), err)
		}
		w.cover.add(0, uint64(w.length))
	}
	return w, nil
}

func (d *decoder) chunk() (*wreq, error) {
	if _, err := io.ReadFull(d.r, d.hdr[4:chunkHeaderLen]); err != nil {
		return nil, readErr("a structured reply header", err)
	}
	c := parseChunk(d.hdr[4:])
	if !d.structured {
		return nil, protoErrorf("structured reply chunk (cookie %d) although structured replies were not negotiated", c.cookie)
	}
	w := d.find(c.cookie)
	if w == nil {
		return nil, protoErrorf("structured reply for unknown cookie %d", c.cookie)
	}
	if err := d.body(w, c); err != nil {
		return nil, fmt.Errorf("%w (in the reply to %s of %d bytes at offset %d, cookie %d)", err, cmdName(w.cmd), w.length, w.off, c.cookie)
	}
	if c.flags&replyFlagDone == 0 {
		return nil, nil
	}
	return w, d.finish(w)
}

// body reads one chunk's payload into w.
func (d *decoder) body(w *wreq, c chunk) error {
	switch {
	case c.typ == chunkNone:
		if c.length != 0 || c.flags&replyFlagDone == 0 {
			return protoErrorf("NBD_REPLY_TYPE_NONE with length %d and flags 0x%x (want 0 and DONE)", c.length, c.flags)
		}
		return nil
	case c.typ == chunkOffsetData:
		return d.data(w, c)
	case c.typ == chunkOffsetHole:
		return d.hole(w, c)
	case c.typ == chunkBlockStatus:
		return d.blockStatus(w, c)
	case c.typ&chunkFlagError != 0:
		return d.errorChunk(w, c)
	}
	return protoErrorf("unknown chunk type %d", c.typ)
}

func (d *decoder) data(w *wreq, c chunk) error {
	if w.cmd != cmdRead {
		return protoErrorf("data chunk in reply to %s", cmdName(w.cmd))
	}
	if c.length < 9 {
		return protoErrorf("NBD_REPLY_TYPE_OFFSET_DATA of %d bytes (less than 9)", c.length)
	}
	var b [8]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return readErr("a data chunk", err)
	}
	off, n := be.Uint64(b[:]), uint64(c.length-8)
	if err := d.place(w, "data", off, n); err != nil {
		return err
	}
	rel := off - w.off
	if _, err := io.ReadFull(d.r, w.buf[rel:rel+n]); err != nil {
		return readErr(fmt.Sprintf("%d bytes of data", n), err)
	}
	return nil
}

func (d *decoder) hole(w *wreq, c chunk) error {
	if w.cmd != cmdRead {
		return protoErrorf("hole chunk in reply to %s", cmdName(w.cmd))
	}
	if c.length != 12 {
		return protoErrorf("NBD_REPLY_TYPE_OFFSET_HOLE of %d bytes (want 12)", c.length)
	}
	var b [12]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return readErr("a hole chunk", err)
	}
	off, n := be.Uint64(b[:]), uint64(be.Uint32(b[8:]))
	if n == 0 {
		return protoErrorf("hole of length 0 at offset %d", off)
	}
	if err := d.place(w, "hole", off, n); err != nil {
		return err
	}
	rel := off - w.off
	clear(w.buf[rel : rel+n])
	return nil
}

// place checks that a content chunk lies inside the request and overlaps
// no earlier one, and records it.
func (d *decoder) place(w *wreq, what string, off, n uint64) error {
	if !within(off, n, w.off, w.length) {
		return protoErrorf("%s chunk [%d, +%d) outside the request [%d, +%d)", what, off, n, w.off, w.length)
	}
	if !w.cover.add(off-w.off, n) {
		return protoErrorf("%s chunk [%d, +%d) overlaps an earlier chunk", what, off, n)
	}
	return nil
}

func (d *decoder) blockStatus(w *wreq, c chunk) error {
	if w.cmd != cmdBlockStatus {
		return protoErrorf("block status chunk in reply to %s", cmdName(w.cmd))
	}
	if c.length > maxStatusPayload {
		return protoErrorf("block status chunk of %d bytes (more than %d)", c.length, maxStatusPayload)
	}
	p, err := d.payload(c.length, "a block status chunk")
	if err != nil {
		return err
	}
	id, ext, err := parseBlockStatus(p, w.length)
	if err != nil {
		return err
	}
	k, ok := d.contexts.index(id)
	if !ok {
		return protoErrorf("block status for context %d, which we did not select", id)
	}
	if w.gotStatus[k] {
		return protoErrorf("two block status chunks for context %d", id)
	}
	w.status[k], w.gotStatus[k] = ext, true
	return nil
}

func (d *decoder) errorChunk(w *wreq, c chunk) error {
	if c.length > maxErrorPayload {
		return protoErrorf("error chunk of %d bytes (more than %d)", c.length, maxErrorPayload)
	}
	p, err := d.payload(c.length, "an error chunk")
	if err != nil {
		return err
	}
	e, err := parseErrorChunk(c.typ, p)
	if err != nil {
		return err
	}
	if e.hasOffset && !within(e.off, 1, w.off, w.length) {
		return protoErrorf("error offset %d outside the request [%d, +%d)", e.off, w.off, w.length)
	}
	if w.errno == 0 {
		w.errno, w.msg = errnoFromWire(e.errno), e.msg
	}
	return nil
}

// finish checks a completed structured reply: a successful read must
// have described every byte, a successful block status must carry one
// chunk for each context selected (the spec: "exactly one chunk ... per
// selected context id").
func (d *decoder) finish(w *wreq) error {
	if w.errno != 0 {
		return nil
	}
	if w.cmd == cmdRead && w.cover.total != uint64(w.length) {
		return protoErrorf("read reply (cookie %d) done after %d of %d bytes", w.cookie, w.cover.total, w.length)
	}
	if w.cmd != cmdBlockStatus {
		return nil
	}
	for k, has := range d.contexts.has {
		if has && !w.gotStatus[k] {
			return protoErrorf("block status reply (cookie %d) done without a chunk for context %d (%s)", w.cookie, d.contexts.id[k], contextName(k))
		}
	}
	return nil
}

// contextName names a context by its index, for errors.
func contextName(k int) string {
	if k == ctxBitmap {
		return "the dirty bitmap"
	}
	return metaContextAllocation
}

func (d *decoder) payload(n uint32, what string) ([]byte, error) {
	if cap(d.scratch) < int(n) {
		d.scratch = make([]byte, n)
	}
	p := d.scratch[:n]
	if _, err := io.ReadFull(d.r, p); err != nil {
		return nil, readErr(what, err)
	}
	return p, nil
}
