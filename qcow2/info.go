package qcow2

import "fmt"

// Info is what a platform asks of an image before it copies it: what
// qemu-img info says of each file of the chain.
type Info struct {
	Name        string
	Format      Format
	VirtualSize int64
	FileSize    int64 // the host file's length
	// DiskSize is the host bytes the file takes (st_blocks on Linux), as
	// qemu-img info's "disk size"; -1 when the Transport cannot tell.
	DiskSize int64

	// The rest is of qcow2 files only.
	ClusterSize     int64
	Version         int    // 2 or 3
	Compat          string // "0.10" (version 2) or "1.1" (version 3)
	CompressionType string // "zlib" or "zstd"
	ExtendedL2      bool
	LazyRefcounts   bool
	RefcountBits    int
	Dirty           bool
	Corrupt         bool
	Encrypted       string // "", "aes" or "luks"
	Snapshots       int    // internal snapshots (never read here)
	DataFile        string // external data file name, "" when none
	DataFileRaw     bool
	BackingFile     string // as written in the image
	BackingFormat   Format // as written in the image
	// DataBytes is the guest bytes this file holds (data and compressed
	// clusters, not its backing file's); -1 when not counted (a refused
	// image, or the metadata check was skipped).
	DataBytes int64
	// CompressedBytes is the guest bytes of DataBytes in compressed
	// clusters.
	CompressedBytes int64

	// InUse says whether QEMU holds the file, when the caller's
	// InspectOptions.InUse hook could tell; nil otherwise.
	InUse *bool

	// Backing is the next file of the chain; nil at its end, or when it
	// was not opened (then BackingError says why).
	Backing      *Info
	BackingError error
}

// InspectOptions are Options plus the hook for what this package leaves
// to its caller.
type InspectOptions struct {
	Options
	// InUse, when set, tells whether a file of the chain is in use by
	// QEMU (its locks: package guard's business).
	InUse func(t Transport) (bool, error)
}

// Inspect describes the image on t and its chain. Unlike Open, it
// describes a dirty, corrupt-marked or encrypted image rather than refuse
// it (its figures then come from the header alone); only a file that is
// not readable as qcow2 at all is an error.
func Inspect(t Transport, opts InspectOptions) (*Info, error) {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	return inspect(t, FormatQcow2, opts, &chainSeen{}, 0)
}

// inspect describes t, a file of format at depth of a chain; with
// opts.Guessed (its format was probed), the files it names are not
// opened (see Options.Guessed): BackingError says so.
func inspect(t Transport, format Format, opts InspectOptions, seen *chainSeen, depth int) (*Info, error) {
	if err := seen.add(t); err != nil {
		return nil, err
	}
	info := &Info{Name: t.Name(), Format: format, DiskSize: diskSize(t), DataBytes: -1}
	size, err := transportSize(t)
	if err != nil {
		return nil, err
	}
	info.FileSize, info.VirtualSize = size, size
	if opts.InUse != nil {
		if busy, err := opts.InUse(t); err == nil {
			info.InUse = &busy
		}
	}
	if format == FormatRaw {
		return info, nil
	}
	im, err := readImage(t, opts.Options)
	if err != nil {
		return nil, err
	}
	info.describe(im.h)
	info.VirtualSize = im.size
	if opts.Guessed {
		if err := im.h.checkGuessed(im.name, depth); err != nil {
			info.BackingError = err
			return info, nil
		}
	}
	if im.h.checkFeatures(im.name) == nil {
		// Count the data; a failure here is the image's, not Inspect's.
		if err := im.openDataFile(opts.Options); err == nil {
			if im.check() == nil {
				info.DataBytes, info.CompressedBytes = im.stats.dataBytes, im.stats.compressedBytes
			}
		}
		im.Close()
	}
	if info.BackingFile != "" {
		info.Backing, info.BackingError = inspectBacking(im, opts, seen, depth)
	}
	return info, nil
}

// inspectBacking describes the backing file of im.
func inspectBacking(im *Image, opts InspectOptions, seen *chainSeen, depth int) (*Info, error) {
	if depth+1 > opts.MaxDepth {
		return nil, &Error{Name: im.name, Cause: ErrChainTooDeep, What: fmt.Sprintf("more than %d backing files", opts.MaxDepth)}
	}
	t, format, err := im.openRef(opts.Options, Ref{Kind: RefBacking, Name: im.h.BackingFile, Format: im.h.BackingFormat, From: im.name})
	if err != nil {
		return nil, err
	}
	defer im.Close() // closes t, which openRef kept
	opts.Guessed = format == ""
	if format == "" {
		format = probe(t)
	}
	if format != FormatQcow2 && format != FormatRaw {
		return nil, &Error{Name: t.Name(), Cause: ErrUnsupported, What: fmt.Sprintf("backing file format %q", format)}
	}
	return inspect(t, format, opts, seen, depth+1)
}

// describe copies what the header says.
func (info *Info) describe(h *Header) {
	info.ClusterSize = h.clusterSize()
	info.Version = h.Version
	info.Compat = map[int]string{2: "0.10", 3: "1.1"}[h.Version]
	info.CompressionType = map[uint8]string{compressZlib: "zlib", compressZstd: "zstd"}[h.CompressionType]
	info.ExtendedL2 = h.extendedL2()
	info.LazyRefcounts = h.Compatible&compatLazyRefcounts != 0
	info.RefcountBits = 1 << h.RefcountOrder
	info.Dirty = h.Incompatible&incompatDirty != 0
	info.Corrupt = h.Incompatible&incompatCorrupt != 0
	switch {
	case h.CryptMethod == 1:
		info.Encrypted = "aes"
	case h.CryptMethod == 2 || h.HasCryptoExtension:
		info.Encrypted = "luks"
	}
	info.Snapshots = int(h.NbSnapshots)
	if h.Incompatible&incompatDataFile != 0 {
		info.DataFile = h.DataFile
		info.DataFileRaw = h.Autoclear&autoclearRawData != 0
	}
	info.BackingFile, info.BackingFormat = h.BackingFile, h.BackingFormat
}
