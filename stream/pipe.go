package stream

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Pipe is a source read once, in order: standard input, a FIFO, a
// character device. When what it reads is a regular file or a block
// device (ringcp - < disk.img), it says so: the caller may then read it
// at offsets through File like any local file.
type Pipe struct {
	f    *os.File
	name string
	size int64
	seq  bool
	// poll, when not nil, reads f: a blocking descriptor that Go's
	// poller cannot wait on, which Interrupt must still end (Stdin).
	poll *pollReader
}

// Stdin is the process's standard input, named "stdin". A pipe is read
// through a descriptor of its own (pollable: see Interrupt) where the
// system allows it; elsewhere (a socket, another user's pipe) each read
// waits in poll(2) first, which Interrupt ends too.
func Stdin() (*Pipe, error) {
	p, err := newPipe(os.Stdin, "stdin")
	if err != nil || !p.seq {
		return p, err
	}
	p.f = pollable(p.f)
	if p.f.SetReadDeadline(time.Time{}) != nil {
		// Not in Go's poller: a read deadline would not end a read.
		// Without an eventfd (none left), reads are plain and a stop
		// waits for the writer, as before.
		if pr, perr := newPollReader(p.f); perr == nil {
			p.poll = pr
		}
	}
	return p, nil
}

// OpenPipe opens path (a FIFO, /dev/stdin...) read-only; a FIFO's open
// waits for a writer, as cat's does.
func OpenPipe(path string) (*Pipe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := newPipe(f, path)
	if err != nil {
		f.Close()
	}
	return p, err
}

func newPipe(f *os.File, name string) (*Pipe, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Pipe{f: f, name: name, size: -1, seq: true}
	switch mode := fi.Mode(); {
	case mode.IsRegular():
		p.size, p.seq = fi.Size(), false
	case mode&os.ModeDevice != 0 && mode&os.ModeCharDevice == 0:
		p.seq = false // a block device: its size is the caller's to ask
	case mode&os.ModeNamedPipe != 0:
		growPipe(f)
	}
	return p, nil
}

// Name is "stdin" or the path.
func (p *Pipe) Name() string { return p.name }

// Size is the length when it is a regular file; -1 otherwise (known only
// at the end).
func (p *Pipe) Size() int64 { return p.size }

// Sequential tells whether it can only be read in order (a pipe, a
// terminal, a socket); false for a regular file or a block device.
func (p *Pipe) Sequential() bool { return p.seq }

// File is the descriptor, for a caller that reads a non-sequential Pipe at
// offsets.
func (p *Pipe) File() *os.File { return p.f }

// Read reads the next bytes; io.EOF when the writer closed its end.
func (p *Pipe) Read(b []byte) (int, error) {
	if p.poll != nil {
		return p.poll.Read(b)
	}
	return p.f.Read(b)
}

// Interrupt makes a Read that waits, and every later one, fail at once
// (os.ErrDeadlineExceeded): a copy that stops does not wait for a writer
// that neither writes nor closes.
func (p *Pipe) Interrupt() {
	if p.poll != nil {
		p.poll.interrupt()
		return
	}
	p.f.SetReadDeadline(time.Unix(1, 0))
}

// Close closes the descriptor (standard input too).
func (p *Pipe) Close() error {
	if p.poll != nil {
		p.poll.close()
	}
	return p.f.Close()
}

var _ io.ReadCloser = (*Pipe)(nil)
