package unpack

import (
	"io"
)

// aheadChunk is what decodeAhead hands over at a time.
const aheadChunk = 1 << 20

// decodeAhead runs a sequential decoder (gzip, bzip2) on a goroutine of
// its own, depth chunks ahead of the reader: the decoding overlaps what
// the reader does with the bytes (hashing, scanning for zeros, writing),
// on another core. It costs one more copy of each byte.
func decodeAhead(dec io.Reader, depth int) *pipeline {
	return startPipeline(depth, func(emit func(*unit) error) error {
		for {
			buf := getBuf(aheadChunk)
			n, err := fill(dec, buf)
			if n > 0 {
				u := &unit{out: buf[:n], done: make(chan struct{})}
				close(u.done)
				if err := emit(u); err != nil {
					return err
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
}

// fill reads into buf until it is full or r fails; io.EOF at r's end.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
