package nbd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A server that breaks the protocol after three reads are in flight:
// every one of them completes with an error that wraps the right sentinel
// and names what happened, within the timeout, and the client is dead
// afterwards. None ever returns success with wrong data.
func TestBrokenServer(t *testing.T) {
	const n = 4096
	cases := []struct {
		name   string
		setup  fakeSetup
		script func(f *fakeConn, r []request)
		want   error
		says   string
	}{
		{"bad magic", fakeSetup{}, func(f *fakeConn, r []request) {
			f.c.Write(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 8))
		}, ErrProtocol, "reply magic 0xdeadbeef"},
		{"unknown cookie", fakeSetup{}, func(f *fakeConn, r []request) {
			f.simple(999, 0, nil)
		}, ErrProtocol, "unknown cookie 999"},
		{"reply longer than asked", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkOffsetData, r[0].cookie, dataChunk(r[0].off, make([]byte, n+1)))
		}, ErrProtocol, "outside the request"},
		{"chunk outside the request", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkOffsetData, r[0].cookie, dataChunk(r[1].off, make([]byte, 10)))
		}, ErrProtocol, "outside the request"},
		{"hole outside the request", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkOffsetHole, r[1].cookie, holeChunk(r[1].off-1, 2))
		}, ErrProtocol, "outside the request"},
		{"overlapping chunks", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(r[0].off, make([]byte, 100)))
			f.chunk(replyFlagDone, chunkOffsetHole, r[0].cookie, holeChunk(r[0].off+99, n-99))
		}, ErrProtocol, "overlaps"},
		{"done before every byte", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkOffsetData, r[2].cookie, dataChunk(r[2].off, make([]byte, 2048)))
		}, ErrProtocol, "done after 2048 of 4096 bytes"},
		{"truncated chunk", fakeSetup{}, func(f *fakeConn, r []request) {
			f.c.Write(chunkBytes(replyFlagDone, chunkOffsetData, r[0].cookie, n+8))
			f.c.Write(make([]byte, 100))
			f.c.Close()
		}, ErrProtocol, "closed the connection while sending"},
		{"truncated header", fakeSetup{}, func(f *fakeConn, r []request) {
			f.c.Write(chunkBytes(replyFlagDone, chunkOffsetData, r[0].cookie, n+8)[:9])
			f.c.Close()
		}, ErrProtocol, "closed the connection while sending"},
		{"no DONE, then close", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(r[0].off, make([]byte, n)))
			f.c.Close()
		}, ErrDisconnected, "3 requests in flight"},
		{"no DONE, then silence", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(r[0].off, make([]byte, n)))
			f.reqs(1)
		}, ErrTimeout, "no reply for"},
		{"silence", fakeSetup{}, func(f *fakeConn, r []request) {
			f.reqs(1)
		}, ErrTimeout, "no reply for 300ms with 3 requests in flight"},
		{"simple success to a structured read", fakeSetup{}, func(f *fakeConn, r []request) {
			f.simple(r[0].cookie, 0, make([]byte, n))
		}, ErrProtocol, "simple success reply to a read"},
		{"chunk without structured replies", fakeSetup{noStructured: true}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkNone, r[0].cookie, nil)
		}, ErrProtocol, "not negotiated"},
		{"unknown chunk type", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, 77, r[0].cookie, nil)
		}, ErrProtocol, "unknown chunk type 77"},
		{"error message longer than its chunk", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkError, r[0].cookie, errChunk(5, "abc")[:8])
		}, ErrProtocol, "error message of 3 bytes"},
		{"NONE without DONE", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(0, chunkNone, r[0].cookie, nil)
		}, ErrProtocol, "NBD_REPLY_TYPE_NONE"},
		{"block status to a read", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkBlockStatus, r[0].cookie, make([]byte, 12))
		}, ErrProtocol, "block status chunk in reply to read"},
		{"second reply to one cookie", fakeSetup{}, func(f *fakeConn, r []request) {
			f.chunk(replyFlagDone, chunkOffsetHole, r[0].cookie, holeChunk(r[0].off, n))
			f.chunk(replyFlagDone, chunkOffsetHole, r[0].cookie, holeChunk(r[0].off, n))
		}, ErrProtocol, "unknown cookie"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup.size = 1 << 20
			uri := fakeServer(t, tc.setup, func(f *fakeConn) {
				r := f.reqs(3)
				if len(r) == 3 {
					tc.script(f, r)
				}
				f.reqs(100) // hold the connection until the client goes
			})
			c := dial(t, uri, Options{Timeout: 300 * time.Millisecond})
			start := time.Now()
			got, bufs := readsInFlight(t, c, 3, n)
			// A request the server answered well before breaking may
			// succeed (the fake's data is zeroes); the others fail, and
			// the one that broke says why.
			for _, cp := range got {
				if cp.Err == nil && !bytes.Equal(bufs[cp.Tag], make([]byte, n)) {
					t.Fatalf("read %d succeeded with wrong data", cp.Tag)
				}
			}
			if got[2].Err == nil {
				t.Fatalf("every read succeeded on a broken stream")
			}
			var why error
			for _, cp := range got {
				if errors.Is(cp.Err, tc.want) {
					why = cp.Err
				}
			}
			if why == nil || !strings.Contains(why.Error(), tc.says) {
				t.Fatalf("errors %v, want one wrapping %v saying %q", got, tc.want, tc.says)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("failing took %v", took)
			}
			if err := c.Submit(Request{Op: OpRead, Buf: make([]byte, 1)}); err == nil {
				t.Fatal("Submit on a dead connection succeeded")
			}
		})
	}
}

// readsInFlight submits k reads of n bytes at i*n into buffers of stale
// bytes, reaps them all, and returns the completions by tag and the
// buffers.
func readsInFlight(t *testing.T, c *Client, k int, n int64) ([]Completion, [][]byte) {
	t.Helper()
	bufs := make([][]byte, k)
	for i := range k {
		bufs[i] = bytes.Repeat([]byte{0xa5}, int(n))
		if err := c.Submit(Request{Op: OpRead, Off: int64(i) * n, Buf: bufs[i], Tag: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]Completion, k)
	got := 0
	for got < k {
		m, err := c.Reap(out[got:], 1, 20*time.Second)
		if err != nil {
			t.Fatalf("reap: %v after %d completions", err, got)
		}
		got += m
	}
	byTag := make([]Completion, k)
	for _, cp := range out {
		byTag[cp.Tag] = cp
	}
	return byTag, bufs
}

// Replies that look odd but keep the protocol: chunks out of order, holes,
// errors with messages and offsets, unknown error types and errno
// values, simple error replies. Data lands right, errors map to errnos,
// and the connection goes on.
func TestOddButValidReplies(t *testing.T) {
	content := random(5, 1<<20)
	uri := fakeServer(t, fakeSetup{size: 1 << 20}, func(f *fakeConn) {
		r := f.reqs(6)
		if len(r) < 6 {
			return
		}
		// r[0]: three pieces out of order, the middle one a hole.
		f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(r[0].off+3000, content[r[0].off+3000:r[0].off+4096]))
		f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(r[0].off, content[r[0].off:r[0].off+1000]))
		f.chunk(0, chunkOffsetHole, r[0].cookie, holeChunk(r[0].off+1000, 2000))
		f.chunk(replyFlagDone, chunkNone, r[0].cookie, nil)
		// Replies in reverse order of the requests.
		f.chunk(replyFlagDone, chunkErrorOffset, r[5].cookie, errChunk(28, "disk full", r[5].off+7))
		f.chunk(0, chunkOffsetData, r[4].cookie, dataChunk(r[4].off, content[r[4].off:r[4].off+4096]))
		f.chunk(replyFlagDone, chunkFlagError|55, r[4].cookie, errChunk(1, "odd type"))
		f.simple(r[3].cookie, 99, nil) // unknown errno: EINVAL
		f.simple(r[2].cookie, 5, nil)  // simple error to a read: no payload
		f.chunk(replyFlagDone, chunkError, r[1].cookie, errChunk(108, "bye"))
		f.serveReads(content)
	})
	c := dial(t, uri, Options{Timeout: 5 * time.Second})
	got, bufs := readsInFlight(t, c, 6, 4096)
	wantErr := []syscall.Errno{0, syscall.ESHUTDOWN, syscall.EIO, syscall.EINVAL, syscall.EPERM, syscall.ENOSPC}
	for tag, cp := range got {
		if cp.Errno != wantErr[tag] || (cp.Err == nil) != (wantErr[tag] == 0) {
			t.Fatalf("tag %d: %v, want %v", tag, cp.Err, wantErr[tag])
		}
	}
	zeroed := append([]byte(nil), content[:4096]...)
	clear(zeroed[1000:3000])
	if !bytes.Equal(bufs[0], zeroed) {
		t.Fatalf("out-of-order read with a hole: %s", firstDiff(bufs[0], zeroed))
	}
	var e *Error
	if !errors.As(got[5].Err, &e) || e.Msg != "disk full" || e.Offset != 5*4096 || !errors.Is(got[5].Err, syscall.ENOSPC) {
		t.Fatalf("ERROR_OFFSET: %v", got[5].Err)
	}
	// NBD_ESHUTDOWN means the client must disconnect: new requests fail.
	if _, err := c.ReadAt(make([]byte, 4096), 0); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("after NBD_ESHUTDOWN: %v", err)
	}
}

// The data of an out-of-order, holed reply is reassembled byte-exact over
// stale buffer bytes.
func TestReassembly(t *testing.T) {
	content := random(6, 1<<20)
	uri := fakeServer(t, fakeSetup{size: 1 << 20}, func(f *fakeConn) {
		r := f.reqs(1)
		if len(r) < 1 {
			return
		}
		o := r[0].off
		f.chunk(0, chunkOffsetData, r[0].cookie, dataChunk(o+3000, content[o+3000:o+5000]))
		f.chunk(0, chunkOffsetHole, r[0].cookie, holeChunk(o+1000, 2000))
		f.chunk(replyFlagDone, chunkOffsetData, r[0].cookie, dataChunk(o, content[o:o+1000]))
		f.serveReads(content)
	})
	c := dial(t, uri, Options{})
	buf := bytes.Repeat([]byte{0xee}, 5000)
	if _, err := c.ReadAt(buf, 8192); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), content[8192:8192+5000]...)
	clear(want[1000:3000])
	if !bytes.Equal(buf, want) {
		t.Fatalf("reassembled: %s", firstDiff(buf, want))
	}
}

// Handshakes that go wrong fail with a clear error, never a hang.
func TestBrokenHandshake(t *testing.T) {
	cases := []struct {
		name  string
		setup fakeSetup
		says  string
	}{
		{"not NBD", fakeSetup{greeting: []byte("HTTP/1.1 400 Bad Request\r\n\r\n")}, "is this an NBD server?"},
		{"oldstyle", fakeSetup{greeting: be.AppendUint64(be.AppendUint64(nil, magicInit), magicOldstyle)}, "oldstyle"},
		{"closed in the greeting", fakeSetup{greeting: be.AppendUint64(nil, magicInit)}, "closed the connection while sending the greeting"},
		{"silent", fakeSetup{silent: true}, "handshake took longer than 300ms"},
		{"unknown export", fakeSetup{goError: repErrUnknown}, `no export "" (server says: go away)`},
		{"TLS required", fakeSetup{goError: repErrTLSReqd}, "requires TLS"},
		{"policy", fakeSetup{goError: repErrPolicy}, "NBD_REP_ERR_POLICY"},
		{"bad block size", fakeSetup{blockSize: []uint32{3, 4096, 1 << 20}}, "minimum block size 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			uri := fakeServer(t, tc.setup, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, uri, Options{HandshakeTimeout: 300 * time.Millisecond})
			if err == nil {
				c.Close()
				t.Fatal("handshake succeeded")
			}
			var e *Error
			if !errors.As(err, &e) || e.Op != "handshake" || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a handshake error saying %q", err, tc.says)
			}
		})
	}
}

// A server without NBD_OPT_GO gets NBD_OPT_EXPORT_NAME; its block sizes
// are then the spec's defaults. qemu-nbd, which has NBD_OPT_GO, takes the
// same fallback when we force it.
func TestExportNameFallback(t *testing.T) {
	content := random(7, 1<<20)
	uri := fakeServer(t, fakeSetup{size: 1 << 20, noGo: true, flags: uint16(FlagSendFlush)}, func(f *fakeConn) {
		f.serveReads(content)
	})
	c := dial(t, uri, Options{})
	if in := c.Info(); in.Size != 1<<20 || in.BlockSize.Advertised || !in.CanFlush() {
		t.Fatalf("info %+v", in)
	}
	checkReads(t, c, content, awkward(1<<20))

	want := random(8, 1<<20)
	img := writeFile(t, "raw.img", want)
	q := dial(t, qemuNBD(t, overUnix, "raw", img), Options{forceExportName: true})
	if in := q.Info(); in.Size != 1<<20 || in.BlockSize.Advertised {
		t.Fatalf("qemu-nbd by NBD_OPT_EXPORT_NAME: %+v", in)
	}
	checkReads(t, q, want, awkward(1<<20))
}

// Simple replies only (no structured replies): reads carry their payload
// in the simple reply, and Extents reports all data.
func TestSimpleRepliesQemu(t *testing.T) {
	want := random(9, 2<<20)
	img := writeFile(t, "raw.img", want)
	c := dial(t, qemuNBD(t, overTCP, "raw", img), Options{NoStructuredReplies: true})
	if in := c.Info(); in.Structured || in.BlockStatus {
		t.Fatalf("info %+v", in)
	}
	checkReads(t, c, want, awkward(2<<20))
	writeSpans(t, c, want, disjoint(2<<20))
	checkReads(t, c, want, awkward(2<<20))
	ext, err := c.Extents(5, 100)
	if err != nil || len(ext) != 1 || ext[0] != (Extent{Off: 5, Len: 100}) {
		t.Fatalf("extents without block status: %+v %v", ext, err)
	}
}

// With several connections, one that breaks takes the others with it:
// requests in flight on a connection whose server is merely silent fail
// at once too, instead of waiting for the timeout.
func TestMultiConnDiesTogether(t *testing.T) {
	var mu sync.Mutex
	first := true
	uri := fakeServer(t, fakeSetup{size: 1 << 20, flags: uint16(FlagCanMultiConn)}, func(f *fakeConn) {
		r, _, ok := f.req()
		if !ok {
			return
		}
		mu.Lock()
		breaker := first
		first = false
		mu.Unlock()
		if breaker {
			time.Sleep(100 * time.Millisecond) // let the others' requests arrive
			f.simple(r.cookie+1000, 0, nil)
		}
		f.reqs(100)
	})
	c := dial(t, uri, Options{Connections: 2, Timeout: time.Minute})
	if c.Info().Connections != 2 {
		t.Fatalf("connections: %d", c.Info().Connections)
	}
	start := time.Now()
	got, _ := readsInFlight(t, c, 8, 4096)
	for _, cp := range got {
		if !errors.Is(cp.Err, ErrProtocol) {
			t.Fatalf("tag %d: %v, want the protocol error of the other connection", cp.Tag, cp.Err)
		}
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("took %v: the silent connection waited for its timeout", took)
	}
}

// Dial gives up when its context ends, even inside a handshake that has
// more time left.
func TestDialContext(t *testing.T) {
	uri := fakeServer(t, fakeSetup{silent: true}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, uri, Options{HandshakeTimeout: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("got %v after %v, want the context's deadline", err, time.Since(start))
	}
}
