package stream

import (
	"fmt"
	"io"
	"os"
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
}

// Stdin is the process's standard input, named "stdin".
func Stdin() (*Pipe, error) {
	return newPipe(os.Stdin, "stdin")
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
func (p *Pipe) Read(b []byte) (int, error) { return p.f.Read(b) }

// Close closes the descriptor (standard input too).
func (p *Pipe) Close() error { return p.f.Close() }

var _ io.ReadCloser = (*Pipe)(nil)
