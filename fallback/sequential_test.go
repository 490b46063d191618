package fallback_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
)

// TestSequentialEnd runs the suite's copies with SRC a stream: an end
// that can only be read in order, one read at a time
// (engine.IOInfo.Sequential), which returns short reads and EAGAIN at
// random, so that the engine asks for the rest of a chunk, or the whole
// of it again, after later chunks were asked for. Every copy must come out
// byte for byte, and the stream must never be read out of order or
// concurrently. (The suite's chaos copies report short completions for
// reads that ran whole, which a stream's bytes, handed out, cannot be read
// again for; its read passes want holes left unread, which a stream has
// none of.)
func TestSequentialEnd(t *testing.T) {
	tg := enginetest.Target{New: fallback.New, Serve: serveStream}
	t.Run("sizes", func(t *testing.T) {
		for _, size := range enginetest.Sizes {
			for _, direct := range []bool{false, true} {
				sp := enginetest.Spec{Size: size, Direct: direct, BlockSize: 64 << 10, Depth: 4, Length: -1, Truncate: true}
				t.Run(fmt.Sprintf("%d/direct=%v", size, direct), func(t *testing.T) { enginetest.Copy(t, tg, sp) })
			}
		}
	})
	t.Run("ranges", func(t *testing.T) {
		for _, sp := range []enginetest.Spec{
			{Size: 1 << 20, BlockSize: 8192, Depth: 4, SrcOff: 4096, DstOff: 8192, Length: 12289, DstInit: 1 << 20},
			{Size: 1 << 20, Direct: true, BlockSize: 8192, Depth: 8, SrcOff: 65536, Length: 1<<20 - 65536, DstInit: 2 << 20},
			{Size: 3<<20 + 5, BlockSize: 4096, Depth: 16, Length: -1, Truncate: true},
		} {
			t.Run(fmt.Sprintf("%+v", sp), func(t *testing.T) { enginetest.Copy(t, tg, sp) })
		}
	})
	t.Run("canceled", func(t *testing.T) { enginetest.Canceled(t, tg) })
	t.Run("rate-cap", func(t *testing.T) { enginetest.RateCap(t, tg) })
	t.Run("shared-budget", func(t *testing.T) { enginetest.SharedBudget(t, tg) })
}

// serveStream reads SRC's file into memory and makes it a stream.
func serveStream(t testing.TB, job *engine.Job) {
	t.Helper()
	b, err := os.ReadFile(job.Files[engine.FileSrc].Name())
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{t: t, name: job.Files[engine.FileSrc].Name(), data: b, rng: rand.New(rand.NewPCG(uint64(len(b)), 3))}
	job.Ends[engine.FileSrc], job.Files[engine.FileSrc] = s, nil
}

// stream is a sequential end over bytes in memory.
type stream struct {
	t    testing.TB
	name string
	data []byte

	mu  sync.Mutex // held by a read: a second read at once fails the test
	pos int64
	rng *rand.Rand
}

func (s *stream) ReadAt(p []byte, off int64) (int, error) {
	if !s.mu.TryLock() {
		s.t.Errorf("%s: read at %d while another read runs", s.name, off)
		return 0, syscall.EBUSY
	}
	defer s.mu.Unlock()
	if off != s.pos {
		s.t.Errorf("%s: read at %d, the stream is at %d", s.name, off, s.pos)
		return 0, syscall.ESPIPE
	}
	n := min(len(p), len(s.data)-int(off))
	switch r := s.rng.IntN(8); {
	case r == 0 && n > 1:
		n = 1 + s.rng.IntN(n-1) // a short read: the rest comes later
	case r == 1 && n > 0:
		k := s.rng.IntN(n)
		copy(p, s.data[off:off+int64(k)])
		s.pos += int64(k)
		return k, syscall.EAGAIN // some bytes gone from the stream, and a retry
	}
	copy(p, s.data[off:off+int64(n)])
	s.pos += int64(n)
	return n, nil
}

func (s *stream) WriteAt(p []byte, off int64) (int, error) { return 0, syscall.EBADF }
func (s *stream) Zero(off, n int64, punch bool) error      { return syscall.EBADF }
func (s *stream) Flush() error                             { return syscall.EBADF }
func (s *stream) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "stream", Detail: s.name, Sequential: true}
}
func (s *stream) Name() string { return s.name }
func (s *stream) Data(off, end int64) (int64, int64, error) {
	return 0, 0, engine.ErrCannotMap
}
func (s *stream) Settle() error                             { return nil }
func (s *stream) Reserve(off, n int64, keepSize bool) error { return syscall.EOPNOTSUPP }
func (s *stream) Truncate(size int64) error                 { return syscall.EOPNOTSUPP }
func (s *stream) PrepareTail() error                        { return nil }
