package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Content says what byte belongs at every offset of a source. A workload's
// source is written from it once, and every copy is compared against it, so
// a copy is checked byte for byte without reading the source a second time.
// Fill must be safe to call from several goroutines.
type Content interface {
	Fill(off int64, p []byte)
}

// randomContent is incompressible data without zero blocks, addressable at
// any offset: the 8-byte word at index i is splitmix64(seed + i). A counter
// based generator lets two goroutines fill disjoint chunks in parallel and
// lets the checker regenerate any range; at about a nanosecond per word it
// runs far above the disk's speed.
type randomContent struct{ seed uint64 }

func mix64(x uint64) uint64 {
	// splitmix64's output function (Steele, Lea, Flood 2014).
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (c randomContent) Fill(off int64, p []byte) {
	var w [8]byte
	// Unaligned head, one byte at a time.
	for len(p) > 0 && off%8 != 0 {
		binary.LittleEndian.PutUint64(w[:], mix64(c.seed+uint64(off/8)))
		p[0] = w[off%8]
		p, off = p[1:], off+1
	}
	i := uint64(off / 8)
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, mix64(c.seed+i))
		p, i = p[8:], i+1
	}
	if len(p) > 0 {
		binary.LittleEndian.PutUint64(w[:], mix64(c.seed+i))
		copy(p, w[:])
	}
}

// chunkSize is the unit of writing and checking: large enough that O_DIRECT
// reads run at device speed, small enough that two workers hold 16 MiB.
const chunkSize = 8 << 20

// alignedBuf returns n bytes of page-aligned anonymous memory, as O_DIRECT
// wants, and the function that frees it.
func alignedBuf(n int) ([]byte, func(), error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return b, func() { unix.Munmap(b) }, nil
}

// writeSource makes path hold size bytes of c. The whole-chunk part is
// written with O_DIRECT (buffered writes are slow on the test VM and would
// leave gigabytes of dirty pages behind); the tail goes through a buffered
// descriptor because O_DIRECT cannot write a partial sector. Ends with fsync.
func writeSource(path string, c Content, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_DIRECT, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	whole := size / chunkSize * chunkSize
	err = forChunks(whole, func(off int64, buf []byte) error {
		c.Fill(off, buf)
		_, err := f.WriteAt(buf, off)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if tail := size - whole; tail > 0 {
		g, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		buf := make([]byte, tail)
		c.Fill(whole, buf)
		_, err = g.WriteAt(buf, whole)
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write tail of %s: %w", path, err)
		}
	}
	return f.Sync()
}

// forChunks calls fn for each chunkSize piece of [0, n) from two workers
// (the machine has two cores), each with its own aligned buffer. n must be
// a multiple of chunkSize. The first error stops the workers.
func forChunks(n int64, fn func(off int64, buf []byte) error) error {
	const workers = 2
	next := make(chan int64)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, free, err := alignedBuf(chunkSize)
			if err != nil {
				errs <- err
				return
			}
			defer free()
			for off := range next {
				if err := fn(off, buf); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	var err error
feed:
	for off := int64(0); off < n; off += chunkSize {
		select {
		case next <- off:
		case err = <-errs:
			break feed
		case <-done:
			break feed
		}
	}
	close(next)
	<-done
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}
