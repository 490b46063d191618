package syncproto

import (
	"context"
	"io"
	"os"

	"github.com/ringcp/ringcp/blocksync"
)

// ServeOptions tune Serve.
type ServeOptions struct {
	// Host names this host in the welcome (os.Hostname when "").
	Host string
	// Window and Workers are as in Options, for this side's reads; the
	// client does not choose them.
	Window  int
	Workers int
	// MaxRate caps this side's reads and writes together, in bytes a
	// second (0: none): the client's --max-rate (limit.go).
	MaxRate int64
}

// Serve answers one client on conn (ringcp sync --serve's stdin and
// stdout): it reads the hello, opens the end it names, DST for writing
// (with every check OpenTarget makes, before anything is written) or SRC
// read-only, and runs the other half of the sync. stop closes conn;
// Serve calls it when ctx ends or the session fails, which ends the
// client's side too. A client that goes away (EOF) ends the session
// without a DST claimed synced.
func Serve(ctx context.Context, conn io.ReadWriter, stop func(), opt ServeOptions) (Result, error) {
	s := newSession(conn, Options{Window: opt.Window, Workers: opt.Workers}, stop)
	s.peer = "the client"
	unwatch := context.AfterFunc(ctx, s.stop)
	defer func() { unwatch(); s.stop() }()
	p, err := s.expect(ctx, tHello)
	if err != nil {
		return Result{}, err
	}
	h, err := parseHello(p)
	if err == nil && h.version != Version {
		err = protoErrorf("this ringcp speaks sync protocol version %d, the client version %d: install the same ringcp on both hosts", Version, h.version)
	}
	if err != nil {
		return Result{}, s.fail(err)
	}
	s.opt.Granule, s.opt.Verify = int(h.granule), h.verify
	if s.opt, err = s.opt.withDefaults(); err != nil {
		return Result{}, s.fail(err)
	}
	if opt.Host == "" {
		opt.Host, _ = os.Hostname()
	}
	if h.role == roleTarget {
		return serveTarget(ctx, s, h, opt)
	}
	return serveSource(ctx, s, h, opt)
}

// chooseDigest takes the algorithm fastest on the slower host.
func (s *session) chooseDigest(h hello) error {
	alg, ok := blocksync.Choose(blocksync.Speeds(), h.speeds)
	if !ok {
		return protoErrorf("no digest algorithm in common with the client")
	}
	s.alg, s.key = alg, h.key[:]
	return nil
}

// welcome answers the hello with this end's size and identity.
func (s *session) welcome(f *blocksync.File, host string) error {
	w := welcome{version: Version, digest: s.alg, size: f.Size(), created: f.Created(), id: f.Identity(), host: host}
	return s.fw.write(tWelcome, w.encode())
}

func serveTarget(ctx context.Context, s *session, h hello, opt ServeOptions) (Result, error) {
	if err := s.chooseDigest(h); err != nil {
		return Result{}, s.fail(err)
	}
	dst, err := blocksync.OpenTarget(h.path, blocksync.TargetOptions{Create: h.create, Force: h.force})
	if err != nil {
		return Result{}, s.fail(err)
	}
	defer dst.Close() // a new DST not committed is removed
	if !h.rawDst && !h.force {
		if err := dst.RefuseImage("DST"); err != nil {
			return Result{}, s.fail(err)
		}
	}
	if err := s.welcome(dst, opt.Host); err != nil {
		return Result{}, err
	}
	direct := blocksync.NewDirect(dst) // the changes applied around the page cache, then fdatasync
	defer direct.Release()
	p, err := s.expect(ctx, tStart)
	if err != nil {
		return Result{}, err
	}
	size, err := parseCount(p, "start")
	if err != nil {
		return Result{}, s.fail(err)
	}
	s.setSize(size)
	var target blocksync.Target = direct
	if opt.MaxRate > 0 {
		target = Limit(direct, opt.MaxRate)
	}
	st, err := runTarget(ctx, s, target)
	r := s.result(st)
	r.Created = dst.Created()
	return r, err
}

func serveSource(ctx context.Context, s *session, h hello, opt ServeOptions) (Result, error) {
	if err := s.chooseDigest(h); err != nil {
		return Result{}, s.fail(err)
	}
	src, err := blocksync.OpenSource(h.path)
	if err != nil {
		return Result{}, s.fail(err)
	}
	defer src.Close()
	if !h.rawSrc {
		if err := src.RefuseImage("SRC"); err != nil {
			return Result{}, s.fail(err)
		}
	}
	unchanged, err := watchServed(src, h.path)
	if err != nil {
		return Result{}, s.fail(err)
	}
	if err := s.welcome(src, opt.Host); err != nil {
		return Result{}, err
	}
	s.setSize(src.Size())
	if err := s.fw.write(tStart, encodeCount(src.Size())); err != nil {
		return Result{}, err
	}
	var from blocksync.Source = src
	if opt.MaxRate > 0 {
		from = Limit(src, opt.MaxRate)
	}
	st, err := runSource(ctx, s, from, unchanged)
	return s.result(st), err
}
