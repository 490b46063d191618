package qcow2

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"
)

// Prealloc is a Writer's preallocation mode.
type Prealloc uint8

const (
	// PreallocOff allocates only the clusters written.
	PreallocOff Prealloc = iota
	// PreallocMetadata also gives every other cluster a host cluster
	// (a hole of the host file, reading as zeros) and writes every L2
	// table, as qemu-img's preallocation=metadata: later writes by QEMU
	// allocate nothing.
	PreallocMetadata
)

// GuestReader is a disk as its guest reads it: an *Image, or a raw file
// as an *io.SectionReader.
type GuestReader interface {
	io.ReaderAt
	Size() int64
}

// WriterOptions say what image a Writer creates.
type WriterOptions struct {
	// Size is the virtual size; it is rounded up to a multiple of 512,
	// as QEMU requires (Writer.Size tells the result).
	Size int64
	// ClusterSize is a power of two from 512 B to 2 MiB; 0 means 64 KiB.
	ClusterSize int64
	// Compression compresses every cluster written (those that do not
	// shrink are stored as they are), as qemu-img convert -c.
	Compression Compression
	// BackingFile and BackingFormat are written in the header as they
	// are given (a relative name is relative to the image's folder).
	BackingFile   string
	BackingFormat Format
	// Backing is the backing file as the guest reads it; required with
	// BackingFile. The writer compares each cluster written with it and
	// leaves the clusters that are the same unallocated, so that only
	// what differs is stored; it also fills the unwritten part of a
	// partly written cluster from it. Zeros given where the backing file
	// has data become zero clusters.
	Backing GuestReader
	// TrustWrites skips the comparison: the caller writes only ranges
	// that differ from Backing.
	TrustWrites bool
	// Preallocation: PreallocMetadata cannot be combined with a backing
	// file (it would hide it) nor with compression.
	Preallocation Prealloc
	// Checkpoints keeps the file a complete image at every instant:
	// Create writes empty tables and the header at once, and Checkpoint
	// makes what was written so far part of it (writer_checkpoint.go),
	// so that a copy stopped anywhere can be resumed (Resume).
	Checkpoints bool
}

// Writer creates a new qcow2 image (version 3, refcount_bits 16) on a
// WriteTransport. Guest writes may come in any order and from many
// goroutines at once; each guest byte is written at most once, by WriteAt
// or WriteZeroes, and what is never written reads as zeros (or, with a
// backing file, as the backing file). Data goes to the file as it comes;
// Close writes the L2 and L1 tables, the refcounts and, last, the header,
// then syncs. Until then the first cluster is zeros: an unfinished image
// is not a qcow2 image at all (write it under a temporary name, rename it
// after Close).
type Writer struct {
	t        WriteTransport
	name     string
	opt      WriterOptions
	size     int64
	cs       int64
	cbits    uint
	l2n      int64
	comp     compressor
	buffered bool // partial clusters wait in pending (compression, backing)

	mu      sync.Mutex
	next    int64              // the next free host byte
	packs   []packing          // open packing clusters, for compressed clusters
	l2      map[int64][]uint64 // L2 tables by L1 index, as they will be written
	pending map[int64]*partial // clusters written in part, by cluster index
	err     error              // the first failure: every later call returns it
	closed  bool
	free    []freeRun // punched clusters handed out again (writer_free.go)

	ckMu sync.Mutex // one checkpoint at a time, and Close after it
	// live is the metadata of the checkpoint on disk but its L2 tables
	// (the L1 table, the refcounts; on Resume, all the image names that
	// it does not keep), freed when another replaces it; liveL2 are its
	// L2 tables' host clusters, by L1 index, and changed the tables
	// changed since (writer_checkpoint.go).
	live    []freeRun
	liveL2  map[int64]int64
	changed map[int64]bool
	// started: the file has a header (a checkpoint, or a resumed image),
	// which later headers change in their first sector only.
	started bool
}

// Create starts an image on t, which must be empty (it is truncated).
func Create(t WriteTransport, opt WriterOptions) (*Writer, error) {
	w, err := newWriter(t, opt)
	if err != nil {
		return nil, err
	}
	if err := t.Truncate(0); err != nil {
		return nil, &IOError{Op: "truncate", Name: t.Name(), Err: err}
	}
	if opt.Checkpoints {
		// The file is an image from the start: a copy killed before its
		// first barrier leaves an empty image, not a file of zeros.
		if err := w.Checkpoint(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// newWriter checks opt and makes a Writer with nothing written.
func newWriter(t WriteTransport, opt WriterOptions) (*Writer, error) {
	if opt.ClusterSize == 0 {
		opt.ClusterSize = 64 << 10
	}
	if err := opt.validate(); err != nil {
		return nil, err
	}
	comp, err := newCompressor(opt.Compression, opt.ClusterSize)
	if err != nil {
		return nil, err
	}
	w := &Writer{t: t, name: t.Name(), opt: opt, cs: opt.ClusterSize,
		size: (opt.Size + 511) &^ 511, cbits: uint(bits.TrailingZeros64(uint64(opt.ClusterSize))),
		comp: comp, l2: map[int64][]uint64{}, pending: map[int64]*partial{},
		liveL2: map[int64]int64{}, changed: map[int64]bool{}}
	w.l2n = w.cs / 8
	w.next = w.cs // cluster 0 is the header, written last
	w.buffered = comp != nil || opt.Backing != nil
	return w, nil
}

func (o *WriterOptions) validate() error {
	cs := o.ClusterSize
	switch {
	case o.Size < 0:
		return fmt.Errorf("qcow2: negative size %d", o.Size)
	case cs < 1<<minClusterBits || cs > 1<<maxClusterBits || cs&(cs-1) != 0:
		return fmt.Errorf("qcow2: cluster size %d: a power of two from 512 to 2M", cs)
	case o.Compression > CompressZstd:
		return fmt.Errorf("qcow2: unknown compression %d", o.Compression)
	case o.BackingFile != "" && o.Backing == nil:
		return errors.New("qcow2: a backing file needs Backing to compare with")
	case o.BackingFile == "" && o.Backing != nil:
		return errors.New("qcow2: Backing without a BackingFile name")
	case len(o.BackingFile) > maxBackingName:
		return fmt.Errorf("qcow2: backing file name of %d bytes (QEMU's limit is %d)", len(o.BackingFile), maxBackingName)
	case o.Preallocation == PreallocMetadata && (o.Backing != nil || o.Compression != CompressNone):
		return errors.New("qcow2: preallocation=metadata with a backing file or compression")
	}
	if need := headerV3Len + 16 + (len(o.BackingFormat)+7)&^7 + len(o.BackingFile); int64(need) > cs {
		return fmt.Errorf("qcow2: the header and backing file name take %d bytes, more than a %d-byte cluster", need, cs)
	}
	maxSize := int64(maxL1Bytes/8) * (cs / 8) * cs
	if o.Size > maxSize {
		return fmt.Errorf("qcow2: size %d is past what %d-byte clusters can map (%d)", o.Size, cs, maxSize)
	}
	return nil
}

// Size is the image's virtual size (WriterOptions.Size rounded up to 512).
func (w *Writer) Size() int64 { return w.size }

// Name is the Transport's name.
func (w *Writer) Name() string { return w.name }

// WriteAt writes guest bytes at off. p is not kept after it returns.
func (w *Writer) WriteAt(p []byte, off int64) (int, error) {
	if err := w.usable(off, int64(len(p))); err != nil {
		return 0, err
	}
	if err := w.fail(w.write(p, off)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteZeroes says the guest's bytes [off, off+n) are zeros. Without a
// backing file it costs nothing (what is not written reads as zeros);
// with one, the clusters where the backing file has data become zero
// clusters.
func (w *Writer) WriteZeroes(off, n int64) error {
	if err := w.usable(off, n); err != nil {
		return err
	}
	return w.fail(w.zeroes(off, n))
}

// usable refuses a call after Close or a failure, or past the size.
func (w *Writer) usable(off, n int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.err != nil:
		return w.err
	case w.closed:
		return fmt.Errorf("qcow2: %s: write after Close", w.name)
	case off < 0 || n < 0 || off+n > w.size:
		return fmt.Errorf("qcow2: %s: write of %d bytes at %d is outside the size %d", w.name, n, off, w.size)
	}
	return nil
}

// fail keeps the first error: an image that missed a write must not be
// finished by Close.
func (w *Writer) fail(err error) error {
	if err == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	return err
}

// clusterLen is the guest bytes of cluster ci: cs, less for the last one.
func (w *Writer) clusterLen(ci int64) int64 {
	return min(w.cs, w.size-ci*w.cs)
}
