package syncproto

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
)

// pipeConn is one end of an in-process connection: two io.Pipes, which
// hand bytes over synchronously, with no buffer, the harshest transport
// for a protocol that could deadlock.
type pipeConn struct {
	r    *io.PipeReader
	w    *io.PipeWriter
	name string
}

func (c *pipeConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *pipeConn) Name() string                { return c.name }

func (c *pipeConn) Close() error {
	c.w.Close()
	c.r.Close()
	return nil
}

// pipes is a connected pair.
func pipes() (client, server *pipeConn) {
	r1, w1 := io.Pipe()
	r2, w2 := io.Pipe()
	return &pipeConn{r: r2, w: w1, name: "in-process server"}, &pipeConn{r: r1, w: w2, name: "in-process client"}
}

// served is a Serve running on a goroutine.
type served struct {
	done chan struct{}
	res  Result
	err  error
}

// serve runs Serve on conn until it returns.
func serve(t *testing.T, conn io.ReadWriteCloser, opt ServeOptions) *served {
	t.Helper()
	s := &served{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.res, s.err = Serve(context.Background(), conn, func() { conn.Close() }, opt)
	}()
	t.Cleanup(func() { conn.Close(); <-s.done })
	return s
}

// wait is the server's result; it must come soon after the client's.
func (s *served) wait(t *testing.T) (Result, error) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not return within 30s of the client")
	}
	return s.res, s.err
}

// push syncs the local file srcPath to the server's dstPath.
func push(t *testing.T, ctx context.Context, srcPath, dstPath string, opt Options) (client, server Result, cerr, serr error) {
	t.Helper()
	src, err := blocksync.OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{Host: "testhost", Window: 3 * max(opt.Granule, blocksync.DefaultGranule), Workers: 3})
	client, cerr = Push(ctx, c, src, dstPath, opt)
	server, serr = sv.wait(t)
	return client, server, cerr, serr
}

// pull syncs the server's srcPath to the local file dstPath.
func pull(t *testing.T, ctx context.Context, srcPath, dstPath string, topt blocksync.TargetOptions, opt Options) (client, server Result, cerr, serr error) {
	t.Helper()
	dst, err := blocksync.OpenTarget(dstPath, topt)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{Host: "testhost", Workers: 2})
	client, cerr = Pull(ctx, c, srcPath, dst, opt)
	server, serr = sv.wait(t)
	return client, server, cerr, serr
}
