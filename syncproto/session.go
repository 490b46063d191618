package syncproto

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/ringcp/ringcp/blocksync"
)

// Options tune a sync across hosts. The zero value is usable.
type Options struct {
	// Granule is the unit compared and written (blocksync.DefaultGranule
	// when 0).
	Granule int
	// Window is how much of an end one read takes (4 MiB when 0).
	Window int
	// Workers is how many windows each side reads and hashes at once (4
	// when 0).
	Workers int
	// Create lets a push make a missing remote DST (as a new file named
	// only once complete).
	Create bool
	// Force lifts the remote DST's in-use refusal (never a mount), and
	// its refusal as a disk image.
	Force bool
	// RawSrc sends a remote SRC that is a disk image container or a
	// compressed stream as its bytes; RawDst writes raw bytes over a
	// remote DST that is a disk image. Without them the peer refuses
	// such an end (blocksync.File.RefuseImage), as a copy refuses it.
	RawSrc, RawDst bool
	// Verify has the side holding DST read all of it back from the
	// device after its fdatasync and check that against SRC's whole
	// digest (verify.go), not only the granules it wrote.
	Verify bool
	// Digest forces an algorithm; 0 lets the session take the one
	// fastest on the slower host.
	Digest blocksync.Algorithm
	// Progress, when not nil, is updated as the sync goes.
	Progress *blocksync.Progress
}

func (o Options) withDefaults() (Options, error) {
	if o.Granule == 0 {
		o.Granule = blocksync.DefaultGranule
	}
	if err := blocksync.CheckGranule(o.Granule); err != nil {
		return o, err
	}
	if o.Window <= 0 {
		o.Window = 4 << 20
	}
	o.Window = max(o.Window/o.Granule, 1) * o.Granule
	if o.Workers <= 0 {
		o.Workers = 4
	}
	return o, nil
}

// Result is what a sync across hosts did.
type Result struct {
	blocksync.Stats
	Digest   blocksync.Algorithm // the algorithm the session used
	Whole    blocksync.Digest    // the whole digest both sides agreed on
	Sent     int64               // bytes this side sent over the connection
	Received int64               // bytes it received
	Peer     string              // the other host's name, as it says
	Created  bool                // the sync made a new DST
}

// session is one connection's state, shared by the roles.
type session struct {
	fr       *frameReader
	fw       *frameWriter
	opt      Options
	alg      blocksync.Algorithm
	key      []byte
	size     int64 // SRC's size
	granules int64
	peer     string
	stop     func() // closes the connection: unblocks a writer stuck on a full pipe
}

func newSession(conn io.ReadWriter, opt Options, stop func()) *session {
	var once sync.Once
	s := &session{fr: newFrameReader(conn), fw: newFrameWriter(conn), opt: opt, stop: func() { once.Do(stop) }}
	if n, ok := conn.(interface{ Name() string }); ok {
		s.peer = n.Name() // until the peer names itself
	}
	return s
}

// digester makes a Digester for one goroutine.
func (s *session) digester() *blocksync.Digester {
	d, err := blocksync.NewDigester(s.alg, s.key)
	if err != nil {
		panic(err) // the algorithm and key were checked at the handshake
	}
	return d
}

// setSize fixes SRC's size for the rest of the session.
func (s *session) setSize(size int64) {
	s.size, s.granules = size, blocksync.Granules(size, s.opt.Granule)
	if p := s.opt.Progress; p != nil {
		p.Total.Store(size)
	}
}

// fail reports err to the peer and returns it. The report is best
// effort: a peer that is not reading (it failed too, or hung) gets a
// moment, then the session's close unblocks the write.
func (s *session) fail(err error) error {
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		s.fw.write(tError, encodeError(err))
	}()
	select {
	case <-sent:
	case <-time.After(2 * time.Second):
	}
	return err
}

// remote reads an error frame's payload into the peer's error.
func (s *session) remote(p []byte) error {
	err, perr := parseError(p)
	if perr != nil {
		return perr
	}
	return &RemoteError{Peer: s.peer, Err: err}
}

// expect reads the next frame, which must be of type want; an error frame
// is the peer's error.
func (s *session) expect(ctx context.Context, want frameType) ([]byte, error) {
	t, p, err := s.fr.next()
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, s.hungUp(ctx, want)
	case err != nil:
		return nil, err
	case t == tError:
		return nil, s.remote(p)
	case t != want:
		return nil, protoErrorf("a %v frame where the %v frame was due", t, want)
	}
	return p, nil
}

// hungUp names a connection that ended while a frame was due.
func (s *session) hungUp(ctx context.Context, want frameType) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return protoErrorf("the peer closed the connection before the %v frame (%v)", want, io.ErrUnexpectedEOF)
}

func (s *session) result(st blocksync.Stats) Result {
	return Result{Stats: st, Digest: s.alg, Sent: s.fw.sent(), Received: s.fr.read, Peer: s.peer}
}
