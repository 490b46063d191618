package qcow2

import (
	"errors"
	"io"
)

// Options are how Open reads an image and its chain.
type Options struct {
	// Opener opens the backing and data files the image names. Nil
	// refuses every one (ErrBackingRefused): an image with a backing file
	// then cannot be opened.
	Opener Opener
	// MaxDepth bounds the backing chain (the image itself is depth 0).
	// Zero means DefaultMaxDepth.
	MaxDepth int
	// CacheBytes is the budget of each image's L2 table cache. Zero
	// means DefaultCacheBytes.
	CacheBytes int64
	// Lazy skips reading every L2 table at Open. By default Open walks
	// all metadata (what qemu-img check reads, about 1/8192 of the
	// virtual size) so that an L2 entry outside the file or over the
	// metadata is refused before the first read; lazily, such an entry
	// fails the read that meets it.
	Lazy bool
	// Guessed says the image's format was guessed from its first bytes:
	// no one said it is qcow2. Such an image that names a backing or
	// data file is refused (ErrBackingRefused) rather than followed: a
	// raw disk whose guest wrote a qcow2 header into its first sector
	// looks the same, and would make the host read whatever file the
	// guest named (QEMU's probing hole; libvirt probes a format only when
	// the image names no other file). Backing files whose format the
	// image above does not record are probed, and held to the same rule.
	Guessed bool
}

const (
	DefaultMaxDepth   = 64
	DefaultCacheBytes = 16 << 20
)

// Image is an open qcow2 image: the active layer of the image and its
// backing chain, as the guest sees it. Its methods are safe for
// concurrent use.
type Image struct {
	t        Transport
	name     string
	fileSize int64
	h        *Header
	size     int64 // virtual size, a multiple of 512 as QEMU sees it

	cbits    uint  // cluster bits
	cs       int64 // cluster size
	l2n      int64 // entries per L2 table
	scBits   uint  // subcluster bits (cbits-5 with extended L2, else cbits)
	l1       []uint64
	cache    *l2Cache
	dec      decompressor
	stats    *checkStats // filled by the metadata check; nil when Lazy
	extended bool

	data       Transport // where clusters are: t, or the external data file
	dataSize   int64
	dataMapper DataMapper // data's holes; nil when it cannot tell
	extData    bool

	backing layer // nil when none
	closers []io.Closer
	direct  *directView // an O_DIRECT view of data (SetDirect); nil when none
}

// Open reads the image on t: its header, L1 table and, unless opts.Lazy,
// all its metadata, and opens its backing chain and data file through
// opts.Opener. A refusal is an *Error; nothing is written to any file.
// Close releases what Open opened, not t.
func Open(t Transport, opts Options) (*Image, error) {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	return openDepth(t, opts, &chainSeen{}, 0)
}

// openDepth opens the image at depth in a chain whose files so far are
// in seen.
func openDepth(t Transport, opts Options, seen *chainSeen, depth int) (*Image, error) {
	if err := seen.add(t); err != nil {
		return nil, err
	}
	im, err := readImage(t, opts)
	if err != nil {
		return nil, err
	}
	if err := im.h.checkFeatures(im.name); err != nil {
		return nil, err
	}
	if err := im.openRefs(opts, seen, depth); err != nil {
		im.Close()
		return nil, err
	}
	check := im.check
	if opts.Lazy {
		check = im.checkL1
	}
	if err := check(); err != nil {
		im.Close()
		return nil, err
	}
	return im, nil
}

// checkL1 is the part of the metadata check a lazy Open keeps, because
// it is cheap and bounds the work of a walk: no two L1 entries share an
// L2 table (else a file of a few clusters could make a walk of the
// virtual size take time out of proportion to the file).
func (im *Image) checkL1() error {
	seen := make(map[uint64]int, len(im.l1))
	for i, e := range im.l1 {
		off := e & entryOffsetMask
		if off == 0 {
			continue
		}
		if j, ok := seen[off]; ok {
			return malformed(im.name, "L1 entries %d and %d share the L2 table at %#x", j, i, off)
		}
		seen[off] = i
	}
	return nil
}

// readImage reads the header, its extensions and the L1 table; it
// refuses nothing the header says about features (see checkFeatures), so
// that Inspect can describe a dirty or encrypted image.
func readImage(t Transport, opts Options) (*Image, error) {
	name := t.Name()
	fileSize, err := transportSize(t)
	if err != nil {
		return nil, &Error{Name: name, Cause: ErrMalformed, What: "size unknown", Err: err}
	}
	first := make([]byte, min(fileSize, 1<<maxClusterBits))
	if err := readFull(t, first, 0); err != nil {
		return nil, &Error{Name: name, Cause: ErrMalformed, What: "header unreadable", Err: err}
	}
	h, err := parseHeader(name, first, fileSize)
	if err != nil {
		return nil, err
	}
	if err := h.parseExtensions(name, first[:min(int64(len(first)), h.clusterSize())]); err != nil {
		return nil, err
	}
	im := &Image{t: t, name: name, fileSize: fileSize, h: h, data: t, dataSize: fileSize,
		cbits: uint(h.ClusterBits), cs: h.clusterSize(), l2n: h.l2Entries(),
		extended: h.extendedL2()}
	// QEMU counts the size in 512-byte sectors and drops a tail.
	im.size = int64(h.Size &^ 511)
	im.dataMapper = mapperOf(t)
	im.scBits = im.cbits
	if im.extended {
		im.scBits -= 5
	}
	im.prefetchTables()
	if err := im.readL1(); err != nil {
		return nil, err
	}
	im.prefetchL2()
	im.cache = newL2Cache(opts.CacheBytes, im.l2n*im.entryWords()*8)
	im.dec = newDecompressor(h.CompressionType, im.cs)
	return im, nil
}

// entryWords is 2 with extended L2 entries (entry and bitmap), else 1.
func (im *Image) entryWords() int64 {
	if im.extended {
		return 2
	}
	return 1
}

// readL1 reads the L1 table: at most 32 MiB, and inside the file (both
// checked by parseHeader).
func (im *Image) readL1() error {
	// Only the entries that map the virtual size are read; the rest,
	// if any, map nothing the guest sees.
	b := make([]byte, im.l1Entries()*8)
	if err := readFull(im.t, b, int64(im.h.L1TableOffset)); err != nil {
		return &Error{Name: im.name, Cause: ErrMalformed, What: "L1 table unreadable", Err: err}
	}
	im.l1 = decodeTable(b)
	return nil
}

// l1Entries is how many L1 entries readL1 reads: those that map the
// virtual size.
func (im *Image) l1Entries() int64 {
	return min(int64(im.h.L1Size), ceilDiv(im.size, im.cs*im.l2n))
}

// Size is the virtual size: the guest's bytes.
func (im *Image) Size() int64 { return im.size }

// Name is the image's Transport.Name().
func (im *Image) Name() string { return im.name }

// ClusterSize is the image's cluster size.
func (im *Image) ClusterSize() int64 { return im.cs }

// Header is the image's header as read (not to be changed).
func (im *Image) Header() *Header { return im.h }

// Close closes the backing chain and data file the Opener gave; not the
// image's own Transport.
func (im *Image) Close() error {
	var errs []error
	if im.backing != nil {
		errs = append(errs, im.backing.close())
	}
	for _, c := range im.closers {
		errs = append(errs, c.Close())
	}
	im.closers, im.backing = nil, nil
	return errors.Join(errs...)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
