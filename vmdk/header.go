package vmdk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The sparse extent header, little-endian, 512 bytes.
const (
	magic      = 0x564d444b // "KDMV" read as a little-endian uint32
	sector     = 512
	headerLen  = 512
	gdAtEnd    = ^uint64(0) // streamOptimized: the grain directory is named in the footer
	maxGrain   = 2 << 20    // bytes; QEMU's limit is the same
	maxGTEs    = 512        // entries of a grain table, as QEMU allows
	maxDirSize = 64 << 20   // bytes of grain directory and tables kept, at most

	flagNewlineTest = 1 << 0
	flagRedundantGT = 1 << 1
	flagZeroGTE     = 1 << 2 // a grain table entry of 1 is a grain of zeros
	flagCompressed  = 1 << 16
	flagMarkers     = 1 << 17

	compressDeflate = 1
)

// Marker types of a streamOptimized image (a marker whose size is 0).
const (
	markerEOS    = 0
	markerGT     = 1
	markerGD     = 2
	markerFooter = 3
)

var (
	// ErrNotVMDK: no KDMV magic (nor a descriptor file).
	ErrNotVMDK = errors.New("not a sparse vmdk image")
	// ErrUnsupported: a vmdk kind or feature this package does not read.
	ErrUnsupported = errors.New("unsupported vmdk image")
	// ErrMalformed: the metadata contradicts itself or the file.
	ErrMalformed = errors.New("malformed vmdk image")
)

// Error is a refusal: which file, what was found, what to do.
type Error struct {
	Name  string
	Cause error
	What  string
	Hint  string
	Err   error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %v: %s", e.Name, e.Cause, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}

func malformed(name, format string, args ...any) *Error {
	return &Error{Name: name, Cause: ErrMalformed, What: fmt.Sprintf(format, args...),
		Hint: "check it with qemu-img check"}
}

// Header is a sparse extent header as read.
type Header struct {
	Version          uint32
	Flags            uint32
	Capacity         uint64 // sectors
	GrainSize        uint64 // sectors
	DescriptorOffset uint64 // sectors
	DescriptorSize   uint64 // sectors
	NumGTEsPerGT     uint32
	RGDOffset        uint64 // sectors
	GDOffset         uint64 // sectors
	OverHead         uint64 // sectors
	UncleanShutdown  bool
	CompressAlgo     uint16
}

// parseHeader decodes a 512-byte header.
func parseHeader(name string, b []byte) (*Header, error) {
	if len(b) < headerLen || binary.LittleEndian.Uint32(b) != magic {
		return nil, &Error{Name: name, Cause: ErrNotVMDK, What: "no KDMV magic"}
	}
	le := binary.LittleEndian
	h := &Header{
		Version:          le.Uint32(b[4:]),
		Flags:            le.Uint32(b[8:]),
		Capacity:         le.Uint64(b[12:]),
		GrainSize:        le.Uint64(b[20:]),
		DescriptorOffset: le.Uint64(b[28:]),
		DescriptorSize:   le.Uint64(b[36:]),
		NumGTEsPerGT:     le.Uint32(b[44:]),
		RGDOffset:        le.Uint64(b[48:]),
		GDOffset:         le.Uint64(b[56:]),
		OverHead:         le.Uint64(b[64:]),
		UncleanShutdown:  b[72] != 0,
		CompressAlgo:     le.Uint16(b[77:]),
	}
	return h, nil
}

// check refuses what cannot be read as it is.
func (h *Header) check(name string) error {
	switch {
	case h.Version < 1 || h.Version > 3:
		return &Error{Name: name, Cause: ErrUnsupported, What: fmt.Sprintf("version %d", h.Version),
			Hint: "convert it with qemu-img convert -O raw"}
	case h.GrainSize == 0 || h.GrainSize&(h.GrainSize-1) != 0 || h.GrainSize > maxGrain/sector:
		return malformed(name, "grain size of %d sectors (a power of two up to %d bytes)", h.GrainSize, maxGrain)
	case h.NumGTEsPerGT == 0 || h.NumGTEsPerGT > maxGTEs:
		return malformed(name, "%d entries per grain table", h.NumGTEsPerGT)
	case h.Capacity > 1<<55/sector:
		return malformed(name, "capacity of %d sectors", h.Capacity)
	case h.Flags&flagCompressed != 0 && h.CompressAlgo != compressDeflate:
		return &Error{Name: name, Cause: ErrUnsupported, What: fmt.Sprintf("compression algorithm %d", h.CompressAlgo),
			Hint: "only deflate exists"}
	}
	return nil
}

// descriptor reads the embedded descriptor and refuses one that names a
// parent (a delta disk, whose parent this package does not open).
func (h *Header) descriptor(name string, r io.ReaderAt, fileSize int64) (string, error) {
	if h.DescriptorOffset == 0 || h.DescriptorSize == 0 {
		return "", nil
	}
	if h.DescriptorSize > 1<<20/sector || h.DescriptorOffset > uint64(fileSize)/sector {
		return "", malformed(name, "descriptor at sector %d of %d sectors lies outside the file", h.DescriptorOffset, h.DescriptorSize)
	}
	off, n := int64(h.DescriptorOffset)*sector, int64(h.DescriptorSize)*sector
	if n > fileSize-off {
		return "", malformed(name, "descriptor at sector %d of %d sectors lies outside the file", h.DescriptorOffset, h.DescriptorSize)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil && err != io.EOF {
		return "", &Error{Name: name, Cause: ErrMalformed, What: "descriptor unreadable", Err: err}
	}
	d := string(b)
	if i := strings.IndexByte(d, 0); i >= 0 {
		d = d[:i]
	}
	for _, line := range strings.Split(d, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(k) == "parentCID" && strings.Trim(strings.TrimSpace(v), "\"") != "ffffffff" {
			return "", &Error{Name: name, Cause: ErrUnsupported, What: "a delta disk over a parent",
				Hint: "convert the chain with qemu-img convert -O raw"}
		}
	}
	return d, nil
}
