package fallback

import (
	"bytes"
	"io"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// TestSequencerOrder feeds a sequencer reads out of order, as the engine
// sends them after a retry or a rate delay: a read past the position
// reads the gap and keeps it, the late read is served from it, a read
// retried after a failure gets back the bytes the failure took, and bytes
// handed out whole are not kept (asked again, they fail with ESPIPE).
func TestSequencerOrder(t *testing.T) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	st := &orderedStream{t: t, data: data}
	done := make(chan engine.Completion, 16)
	s := startSequencer(st, 16, done)
	defer s.stop()
	read := func(off, n int64) ([]byte, engine.Completion) {
		t.Helper()
		buf := make([]byte, n)
		s.reqs <- engine.Request{Op: engine.OpRead, File: engine.FileSrc, Buf: buf, Off: off}
		c := <-done
		return buf[:c.N], c
	}
	want := func(got []byte, c engine.Completion, off, n int64) {
		t.Helper()
		if c.Errno != 0 || !bytes.Equal(got, data[off:off+n]) {
			t.Fatalf("read %d+%d: %d bytes, errno %v: want the stream's bytes", off, n, c.N, c.Errno)
		}
	}
	// The first read starts the stream at 4096: what is before is skipped.
	got, c := read(4096, 4096)
	want(got, c, 4096, 4096)
	// 16384 comes before 8192: the gap is read and kept.
	got, c = read(16384, 8192)
	want(got, c, 16384, 8192)
	got, c = read(8192, 8192)
	want(got, c, 8192, 8192)
	// A read that fails part-way keeps what it took; its retry gets it.
	st.failAfter = 1000
	if _, c = read(24576, 8192); c.Errno != syscall.EAGAIN {
		t.Fatalf("read with a failing stream: errno %v, want EAGAIN", c.Errno)
	}
	got, c = read(24576, 8192)
	want(got, c, 24576, 8192)
	// Handed out whole: gone.
	if _, c = read(8192, 4096); c.Errno != syscall.ESPIPE {
		t.Fatalf("read of bytes handed out: errno %v, want ESPIPE", c.Errno)
	}
	if len(s.kept) != 0 {
		t.Errorf("%d runs still kept, want none", len(s.kept))
	}
	// At the end a read is short, and its rest, asked from a little
	// before, is served from what was kept.
	end := int64(len(data))
	got, c = read(end-3000, 4096)
	want(got, c, end-3000, 3000)
	got, c = read(end-3072+512, 4096)
	want(got, c, end-2560, 2560)
}

// orderedStream is a stream over data that fails the test when read out
// of order; failAfter, when positive, makes the next read fail with EAGAIN
// after that many bytes.
type orderedStream struct {
	t         *testing.T
	data      []byte
	pos       int64
	failAfter int
}

func (s *orderedStream) ReadAt(p []byte, off int64) (int, error) {
	if off != s.pos {
		s.t.Errorf("stream read at %d, it is at %d", off, s.pos)
		return 0, syscall.ESPIPE
	}
	if off >= int64(len(s.data)) {
		return 0, io.EOF
	}
	n := copy(p, s.data[off:])
	var err error
	if s.failAfter > 0 {
		n, err, s.failAfter = min(n, s.failAfter), syscall.EAGAIN, 0
	}
	s.pos += int64(n)
	return n, err
}

func (s *orderedStream) WriteAt(p []byte, off int64) (int, error) { return 0, syscall.EBADF }
func (s *orderedStream) Zero(off, n int64, punch bool) error      { return syscall.EBADF }
func (s *orderedStream) Flush() error                             { return syscall.EBADF }
func (s *orderedStream) IOInfo() engine.IOInfo                    { return engine.IOInfo{Sequential: true} }
func (s *orderedStream) Name() string                             { return "stream" }
func (s *orderedStream) Data(off, end int64) (int64, int64, error) {
	return off, end, nil
}
func (s *orderedStream) Settle() error                             { return nil }
func (s *orderedStream) Reserve(off, n int64, keepSize bool) error { return syscall.EOPNOTSUPP }
func (s *orderedStream) Truncate(size int64) error                 { return syscall.EOPNOTSUPP }
func (s *orderedStream) PrepareTail() error                        { return nil }
