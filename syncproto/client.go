package syncproto

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/blocksync"
)

// Push makes the end named path on the peer (ringcp sync --serve at the
// other end of conn: see Dial for ssh) hold src's bytes, writing there
// only the granules that differ. It returns once the peer said DST is
// synced and its whole digest equals SRC's; any other way out is an
// error, and DST then holds a mix of old and new granules (or, when the
// peer created it, nothing at all). conn is closed when Push returns, or
// when ctx ends, which ends the peer's side too.
func Push(ctx context.Context, conn io.ReadWriteCloser, src blocksync.Source, path string, opt Options) (Result, error) {
	c, err := start(ctx, conn, opt)
	if err != nil {
		return Result{}, err
	}
	defer c.close()
	// SRC's size goes right behind the hello, so that the peer starts
	// reading DST as soon as it has answered, a round trip sooner than
	// were the start frame sent after the welcome. It is safe before the
	// welcome is checked: the peer only reads DST until data frames come,
	// and none comes before the checks passed.
	w, err := c.handshake(ctx, roleTarget, path, src, encodeCount(src.Size()))
	if err != nil {
		c.close() // first: a peer that is not reading holds the writer's lock
		return c.s.result(blocksync.Stats{}), err
	}
	c.s.setSize(src.Size())
	st, err := runSource(ctx, c.s, src, unchangedOf(src))
	r := c.s.result(st)
	r.Created = w.created
	return r, lateRefusal(err, st)
}

// Pull makes dst hold the bytes of the end named path on the peer,
// writing only the granules that differ, and returns once dst is synced
// (and, for a new DST, named: see blocksync.File.Commit) and its whole
// digest equals the peer's SRC's.
func Pull(ctx context.Context, conn io.ReadWriteCloser, path string, dst blocksync.Target, opt Options) (Result, error) {
	c, err := start(ctx, conn, opt)
	if err != nil {
		return Result{}, err
	}
	defer c.close()
	if _, err := c.handshake(ctx, roleSource, path, dst, nil); err != nil {
		// First: the serving source writes its start at once, and the
		// error frame waits behind it on a transport without a buffer,
		// holding the writer's lock that result takes.
		c.close()
		return c.s.result(blocksync.Stats{}), err
	}
	p, err := c.s.expect(ctx, tStart)
	if err != nil {
		return c.s.result(blocksync.Stats{}), err
	}
	size, err := parseCount(p, "start")
	if err != nil {
		return c.s.result(blocksync.Stats{}), c.s.fail(err)
	}
	c.s.setSize(size)
	st, err := runTarget(ctx, c.s, dst)
	return c.s.result(st), lateRefusal(err, st)
}

// client is a session from the client's side.
type client struct {
	s       *session
	conn    io.Closer
	unwatch func() bool
}

// start sets a session up on conn, closed when ctx ends.
func start(ctx context.Context, conn io.ReadWriteCloser, opt Options) (*client, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		conn.Close()
		return nil, err
	}
	c := &client{conn: conn}
	c.s = newSession(conn, opt, func() { conn.Close() })
	c.unwatch = context.AfterFunc(ctx, c.s.stop)
	return c, nil
}

func (c *client) close() {
	c.unwatch()
	c.s.stop()
}

// handshake says hello (and sends start's payload, when not nil, right
// behind it), reads the welcome, and refuses a peer whose end is local's
// own bytes (ssh to this very host).
func (c *client) handshake(ctx context.Context, r role, path string, local blocksync.Source, start []byte) (welcome, error) {
	s := c.s
	h := hello{version: Version, role: r, create: s.opt.Create, force: s.opt.Force, verify: s.opt.Verify, granule: uint32(s.opt.Granule), path: path,
		rawSrc: s.opt.RawSrc, rawDst: s.opt.RawDst}
	rand.Read(h.key[:])
	h.speeds = map[blocksync.Algorithm]float64{}
	if s.opt.Digest != 0 {
		h.speeds[s.opt.Digest] = 1
	} else {
		h.speeds = blocksync.Speeds()
	}
	frames := []outFrame{{tHello, [][]byte{h.encode()}}}
	if start != nil {
		frames = append(frames, outFrame{tStart, [][]byte{start}})
	}
	if err := s.fw.writeFrames(frames...); err != nil {
		return welcome{}, err
	}
	p, err := s.expect(ctx, tWelcome)
	if err != nil {
		return welcome{}, err
	}
	w, err := parseWelcome(p)
	switch {
	case err != nil:
		return w, s.fail(err)
	case w.version != Version:
		return w, s.fail(protoErrorf("the peer speaks sync protocol version %d, this ringcp version %d", w.version, Version))
	case h.speeds[w.digest] == 0:
		return w, s.fail(protoErrorf("the peer chose digest %v, which was not offered", w.digest))
	}
	s.alg, s.key, s.peer = w.digest, h.key[:], w.host
	if id, ok := local.(interface{ Identity() blocksync.Identity }); ok && id.Identity().Same(w.id) {
		return w, s.fail(&blocksync.RefusedError{Kind: blocksync.KindOverlap, Path: path,
			Reason: fmt.Sprintf("the peer's end (on %s) is the same bytes as %s", w.host, local.Name())})
	}
	// A partition of the other end, or a loop device over it, is not the
	// same file or device, yet writing one overwrites the other.
	if sb, ok := local.(bytesSharer); ok {
		if on := sb.SharesBytes(w.id); on != "" {
			return w, s.fail(&blocksync.RefusedError{Kind: blocksync.KindOverlap, Path: path,
				Reason: fmt.Sprintf("the peer's end (on %s) shares bytes with %s (%s)", w.host, local.Name(), on)})
		}
	}
	return w, nil
}

// bytesSharer is an end on this host that can tell whether a peer's end
// on this same machine shares bytes with it (*blocksync.File).
type bytesSharer interface {
	SharesBytes(peer blocksync.Identity) string
}
