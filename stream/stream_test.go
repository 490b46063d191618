package stream

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.N(256))
	}
	return b
}

// slowReaderAt answers ranges after a random pause, so that they finish
// out of order; failAt makes the range holding that offset fail.
type slowReaderAt struct {
	data     []byte
	failAt   int64
	inFlight atomic.Int32
	most     atomic.Int32
}

var errRange = errors.New("range failed")

func (s *slowReaderAt) ReadAt(p []byte, off int64) (int, error) {
	now := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.most.Load()
		if now <= m || s.most.CompareAndSwap(m, now) {
			break
		}
	}
	time.Sleep(time.Duration(rand.N(2000)) * time.Microsecond)
	if s.failAt >= off && s.failAt < off+int64(len(p)) {
		return 0, errRange
	}
	n := copy(p, s.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadAhead: every awkward size comes out whole and in order, with
// ranges really in flight at once; a failed range ends the stream at its
// place with its error.
func TestReadAhead(t *testing.T) {
	for _, n := range []int{0, 1, 511, 4096, 4097, 1<<20 + 3} {
		want := pattern(n)
		src := &slowReaderAt{data: want, failAt: -1}
		ra := NewReadAhead(src, int64(n), 4093, 4)
		got, err := io.ReadAll(ra)
		ra.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d: %d bytes, %v", n, len(got), err)
		}
		if n > 100_000 && src.most.Load() < 2 {
			t.Fatalf("%d: at most %d range in flight", n, src.most.Load())
		}
	}
	want := pattern(100_000)
	ra := NewReadAhead(&slowReaderAt{data: want, failAt: 50_000}, 100_000, 1000, 8)
	defer ra.Close()
	got, err := io.ReadAll(ra)
	if !errors.Is(err, errRange) || len(got) > 50_000 || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("%d bytes then %v; want at most the 50000 before the failed range, then its error", len(got), err)
	}
}

// stallingAt holds every range but the failing one until released, as a
// server that stalls mid-body; the range at failAt fails at once.
type stallingAt struct {
	failAt  int64
	release chan struct{}
}

func (s *stallingAt) ReadAt(p []byte, off int64) (int, error) {
	if off == s.failAt {
		return 0, errRange
	}
	<-s.release
	return 0, io.ErrUnexpectedEOF
}

// TestReadAheadFailsPastAStall: a range that fails while the ranges
// before it stall fails the stream at once; it did not wait for them
// (a server stalling them kept a failed copy going for minutes).
func TestReadAheadFailsPastAStall(t *testing.T) {
	src := &stallingAt{failAt: 3000, release: make(chan struct{})}
	ra := NewReadAhead(src, 100_000, 1000, 4)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(ra)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errRange) {
			t.Fatalf("the stream failed with %v, want the failed range's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the stream waited for the stalled ranges before the failed one")
	}
	close(src.release)
	ra.Close()
}

// TestReadAheadClose: Close in the middle returns, and reads after it fail.
func TestReadAheadClose(t *testing.T) {
	ra := NewReadAhead(&slowReaderAt{data: pattern(1 << 20), failAt: -1}, 1<<20, 1000, 4)
	io.ReadFull(ra, make([]byte, 5000))
	ra.Close()
	if _, err := io.ReadFull(ra, make([]byte, 5000)); err == nil {
		t.Fatal("read after Close succeeded")
	}
}

// TestPipeFromSlowProducer: a shell writes to a FIFO in pieces with
// pauses; the Pipe reads every byte, knows no size, says sequential.
func TestPipeFromSlowProducer(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	want := pattern(300_001)
	src := filepath.Join(dir, "src")
	os.WriteFile(src, want, 0o600)
	cmd := exec.Command("sh", "-c", `{ head -c 100000; sleep 0.2; head -c 100000; sleep 0.2; cat; } < "$1" > "$2"`, "sh", src, fifo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	p, err := OpenPipe(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Sequential() || p.Size() != -1 || p.Name() != fifo {
		t.Fatalf("sequential %v size %d name %q", p.Sequential(), p.Size(), p.Name())
	}
	c := NewCounter(p)
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, want) || c.Count() != int64(len(want)) {
		t.Fatalf("%d bytes (count %d), %v", len(got), c.Count(), err)
	}
}

// TestPipeRegularFile: standard input redirected from a file is not
// sequential and has a size.
func TestPipeRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, pattern(4097), 0o600)
	p, err := OpenPipe(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Sequential() || p.Size() != 4097 {
		t.Fatalf("sequential %v size %d, want false and 4097", p.Sequential(), p.Size())
	}
}
