package stream

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// pollReader reads a blocking descriptor that cannot wait in Go's poller
// and cannot be opened again non-blocking through /proc (pollable): a
// socket (ENXIO), a pipe of another user's (EACCES). A blocking read(2)
// on it would wait for its writer whatever happens, and a stopped copy
// with it. So each read first waits in poll(2), on the descriptor and on
// an eventfd that interrupt signals, and then reads without waiting
// (preadv2's RWF_NOWAIT, which sockets and pipes take since Linux 5.x):
// the open file description, which others may share (the shell's), is
// never switched to non-blocking.
type pollReader struct {
	f *os.File

	mu      sync.Mutex // wake's life: interrupt may come as it closes
	wake    int        // eventfd, readable once interrupted; -1 closed
	stopped atomic.Bool
	// nowait is false once the kernel refused RWF_NOWAIT (EOPNOTSUPP):
	// reads are then plain, after poll said there is something to read.
	nowait atomic.Bool
}

// errInterrupted is what reads return after interrupt: the deadline
// error the poller's reads give, so that callers see one kind of stop.
var errInterrupted = os.ErrDeadlineExceeded

func newPollReader(f *os.File) (*pollReader, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	p := &pollReader{f: f, wake: wake}
	p.nowait.Store(true)
	return p, nil
}

// Read waits until the descriptor has something (data, its end, an
// error) or interrupt was called, then reads what is there.
func (p *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		if p.stopped.Load() {
			return 0, errInterrupted
		}
		ready, err := p.wait()
		if err != nil {
			return 0, err
		}
		if !ready {
			continue
		}
		n, err := p.readNow(b)
		switch {
		case errors.Is(err, unix.EAGAIN):
			continue // another reader of the description took it
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// wait polls the descriptor and the eventfd; ready says the descriptor
// has something to read.
func (p *pollReader) wait() (ready bool, err error) {
	fd := -1
	control(p.f, func(d int) { fd = d })
	if fd < 0 {
		return false, os.ErrClosed
	}
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	if wake < 0 {
		return false, os.ErrClosed
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	if _, err := unix.Poll(fds, -1); err != nil {
		if errors.Is(err, unix.EINTR) {
			return false, nil
		}
		return false, os.NewSyscallError("poll", err)
	}
	if fds[1].Revents != 0 {
		return false, errInterrupted
	}
	return fds[0].Revents != 0, nil
}

// readNow reads what the descriptor holds without waiting.
func (p *pollReader) readNow(b []byte) (n int, err error) {
	err = os.ErrClosed
	control(p.f, func(fd int) {
		for {
			if p.nowait.Load() {
				n, err = unix.Preadv2(fd, [][]byte{b}, -1, unix.RWF_NOWAIT)
				if errors.Is(err, unix.EOPNOTSUPP) {
					p.nowait.Store(false)
					continue
				}
			} else {
				// poll said there is something: a plain read waits
				// only if another reader of the description took it.
				n, err = unix.Read(fd, b)
			}
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	})
	return max(n, 0), err
}

// interrupt makes the read waiting in poll, and every later one, fail at
// once.
func (p *pollReader) interrupt() {
	p.stopped.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wake >= 0 {
		var one [8]byte
		one[0] = 1
		unix.Write(p.wake, one[:])
	}
}

// close closes the eventfd (the descriptor is the Pipe's).
func (p *pollReader) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wake >= 0 {
		unix.Close(p.wake)
		p.wake = -1
	}
}
