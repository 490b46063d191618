package expectsum

import (
	"hash"
	"io"
)

// Reader hashes the bytes read through it, for a source read in order.
type Reader struct {
	r    io.Reader
	e    Expect
	h    hash.Hash
	n    int64
	done bool
}

// NewReader hashes what is read from r.
func NewReader(r io.Reader, e Expect) *Reader {
	return &Reader{r: r, e: e, h: e.New()}
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if err == io.EOF {
		r.done = true
	}
	return n, err
}

// Verify compares the digest with the expected one; it needs the source
// read to its end (io.EOF seen), else it reports ErrIncomplete.
func (r *Reader) Verify() error {
	if !r.done {
		return &IncompleteError{Hashed: r.n, Size: -1}
	}
	return r.e.check(r.h, r.n)
}
