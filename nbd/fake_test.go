package nbd

import (
	"bufio"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
)

// A fake NBD server that speaks just enough of the protocol to reach
// transmission, then runs a test's script: garbage, wrong cookies,
// truncated replies, silence. It serves one Unix socket per test.

// fakeSetup shapes the fake's handshake.
type fakeSetup struct {
	size         uint64
	flags        uint16 // transmission flags; FlagHasFlags is added
	blockSize    []uint32
	noGo         bool     // answer NBD_OPT_GO with NBD_REP_ERR_UNSUP
	noStructured bool     // answer NBD_OPT_STRUCTURED_REPLY with NBD_REP_ERR_UNSUP
	goError      uint32   // answer NBD_OPT_GO with this error reply
	greeting     []byte   // send these bytes instead of the greeting, then stop
	silent       bool     // send nothing at all
	contexts     []string // metadata contexts selected, ids 9, 10...; nil: base:allocation as 9
}

// fakeConn is the server side of one connection.
type fakeConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// fakeServer starts the fake and returns its URI; script runs on each
// connection after the handshake.
func fakeServer(t *testing.T, s fakeSetup, script func(f *fakeConn)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "fake.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := &fakeConn{t: t, c: c, r: bufio.NewReader(c)}
				if f.handshake(s) && script != nil {
					script(f)
				}
				c.Close() // as a server does after NBD_CMD_DISC
			}()
		}
	}()
	return UnixURI("", sock)
}

// handshake plays the server's side; false when the setup stops early
// or the client went away.
func (f *fakeConn) handshake(s fakeSetup) bool {
	if s.silent {
		io.Copy(io.Discard, f.r)
		return false
	}
	if s.greeting != nil {
		f.c.Write(s.greeting)
		f.c.Close()
		return false
	}
	g := be.AppendUint64(nil, magicInit)
	g = be.AppendUint64(g, magicOpt)
	g = be.AppendUint16(g, flagFixedNewstyle|flagNoZeroes)
	f.c.Write(g)
	var b [16]byte
	if _, err := io.ReadFull(f.r, b[:4]); err != nil {
		return false
	}
	for {
		if _, err := io.ReadFull(f.r, b[:16]); err != nil {
			return false
		}
		opt, data := be.Uint32(b[8:]), make([]byte, be.Uint32(b[12:]))
		if _, err := io.ReadFull(f.r, data); err != nil {
			return false
		}
		if done := f.option(s, opt); done {
			return true
		}
	}
}

// option answers one option; true when transmission starts.
func (f *fakeConn) option(s fakeSetup, opt uint32) bool {
	flags := s.flags | uint16(FlagHasFlags)
	switch {
	case opt == optStructured && s.noStructured:
		f.optReply(opt, repErrUnsup, nil)
	case opt == optStructured:
		f.optReply(opt, repAck, nil)
	case opt == optSetMetaContext:
		names := s.contexts
		if names == nil {
			names = []string{metaContextAllocation}
		}
		for i, n := range names {
			f.optReply(opt, repMetaContext, append(be.AppendUint32(nil, uint32(9+i)), n...))
		}
		f.optReply(opt, repAck, nil)
	case opt == optGo && s.goError != 0:
		f.optReply(opt, s.goError, []byte("go away"))
	case opt == optGo && s.noGo:
		f.optReply(opt, repErrUnsup, nil)
	case opt == optGo:
		info := be.AppendUint16(nil, infoExport)
		info = be.AppendUint64(info, s.size)
		f.optReply(opt, repInfo, be.AppendUint16(info, flags))
		if s.blockSize != nil {
			bs := be.AppendUint16(nil, infoBlockSize)
			for _, v := range s.blockSize {
				bs = be.AppendUint32(bs, v)
			}
			f.optReply(opt, repInfo, bs)
		}
		f.optReply(opt, repAck, nil)
		return true
	case opt == optExportName:
		f.c.Write(be.AppendUint16(be.AppendUint64(nil, s.size), flags))
		return true
	default:
		f.optReply(opt, repErrUnsup, nil)
	}
	return false
}

func (f *fakeConn) optReply(opt, typ uint32, data []byte) {
	b := be.AppendUint64(nil, magicOptReply)
	b = be.AppendUint32(b, opt)
	b = be.AppendUint32(b, typ)
	b = be.AppendUint32(b, uint32(len(data)))
	f.c.Write(append(b, data...))
}

// req reads one request (and a write's payload).
func (f *fakeConn) req() (request, []byte, bool) {
	var b [requestHeaderLen]byte
	if _, err := io.ReadFull(f.r, b[:]); err != nil {
		return request{}, nil, false
	}
	r := request{flags: be.Uint16(b[4:]), cmd: be.Uint16(b[6:]), cookie: be.Uint64(b[8:]),
		off: be.Uint64(b[16:]), length: be.Uint32(b[24:])}
	var p []byte
	if r.cmd == cmdWrite {
		p = make([]byte, r.length)
		if _, err := io.ReadFull(f.r, p); err != nil {
			return r, nil, false
		}
	}
	return r, p, true
}

// reqs reads n requests.
func (f *fakeConn) reqs(n int) []request {
	var out []request
	for range n {
		r, _, ok := f.req()
		if !ok {
			break
		}
		out = append(out, r)
	}
	return out
}

func (f *fakeConn) simple(cookie uint64, errno uint32, data []byte) {
	b := be.AppendUint32(nil, magicSimple)
	b = be.AppendUint32(b, errno)
	b = be.AppendUint64(b, cookie)
	f.c.Write(append(b, data...))
}

func (f *fakeConn) chunk(flags, typ uint16, cookie uint64, payload []byte) {
	f.c.Write(append(chunkBytes(flags, typ, cookie, uint32(len(payload))), payload...))
}

// chunkBytes is a structured reply header claiming length bytes.
func chunkBytes(flags, typ uint16, cookie uint64, length uint32) []byte {
	b := be.AppendUint32(nil, magicStructured)
	b = be.AppendUint16(b, flags)
	b = be.AppendUint16(b, typ)
	b = be.AppendUint64(b, cookie)
	return be.AppendUint32(b, length)
}

// dataChunk is an OFFSET_DATA payload.
func dataChunk(off uint64, data []byte) []byte {
	return append(be.AppendUint64(nil, off), data...)
}

// holeChunk is an OFFSET_HOLE payload.
func holeChunk(off uint64, n uint32) []byte {
	return be.AppendUint32(be.AppendUint64(nil, off), n)
}

// errChunk is an error chunk payload (with an offset for ERROR_OFFSET).
func errChunk(errno uint32, msg string, off ...uint64) []byte {
	b := be.AppendUint32(nil, errno)
	b = be.AppendUint16(b, uint16(len(msg)))
	b = append(b, msg...)
	for _, o := range off {
		b = be.AppendUint64(b, o)
	}
	return b
}

// serveReads answers every read correctly from content, for scripts that
// go on normally after their trick.
func (f *fakeConn) serveReads(content []byte) {
	for {
		r, _, ok := f.req()
		if !ok || r.cmd == cmdDisc {
			return
		}
		switch r.cmd {
		case cmdRead:
			f.chunk(replyFlagDone, chunkOffsetData, r.cookie, dataChunk(r.off, content[r.off:r.off+uint64(r.length)]))
		default:
			f.simple(r.cookie, 0, nil)
		}
	}
}
