package qcow2

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Transport is a host file as random-access bytes: a local file or
// device, an HTTP(S) or S3 object. ReadAt must be safe for concurrent use
// (pread is; an HTTP range reader must be). Its size comes from a
// Size() (int64, error) method when it has one, else from seeking to its
// end (an *os.File, a block device included). An *os.File is a Transport.
type Transport interface {
	io.ReaderAt
	// Name names the file in errors, and is what relative backing names
	// resolve against (see FileOpener).
	Name() string
}

// Sizer is a Transport that knows its size without seeking.
type Sizer interface {
	Size() (int64, error)
}

// DataMapper is a Transport that can tell where its data is (a raw
// backing file with holes): the first run of data at or after off, before
// end, as engine.Endpoint.Data says it. A Transport without it is all
// data. FileOpener's raw files have it (SEEK_DATA on Linux).
type DataMapper interface {
	Data(off, end int64) (start, stop int64, err error)
}

// WriteTransport is a host file a Writer creates an image on: an
// *os.File opened for writing qualifies.
type WriteTransport interface {
	Transport
	io.WriterAt
	Truncate(size int64) error
	Sync() error
}

// Format names an image format in a chain.
type Format string

const (
	FormatQcow2 Format = "qcow2"
	FormatRaw   Format = "raw"
)

// RefKind says what an image refers to another file as.
type RefKind int

const (
	RefBacking  RefKind = iota // the backing file, read where the image has no data
	RefDataFile                // the external data file holding the image's clusters
)

func (k RefKind) String() string {
	if k == RefDataFile {
		return "external data file"
	}
	return "backing file"
}

// Ref is a file an image names, as the Opener is asked for it.
type Ref struct {
	Kind   RefKind
	Name   string // as written in the image: relative or absolute
	Format Format // as written in the image ("" when it does not say)
	From   string // the referring image's Transport.Name()
}

// Opener opens a file an image refers to. It decides whether the name may
// be followed at all (a caller that reads images from untrusted sources
// may refuse every name, or only absolute ones). It returns the file and
// its format; an empty format is probed by the magic bytes (qcow2, else
// raw). A data file is always raw. If the Transport is an io.Closer, the
// Image closes it.
type Opener func(ref Ref) (Transport, Format, error)

// FileOpener opens backing and data files as local files, read-only:
// relative names resolve against the referring image's folder, as QEMU
// does. The format is the one written in the image, else probed. It
// follows only what QEMU would read as a local file that stores bytes:
// a name QEMU reads through a protocol (json:{...}, nbd://...) is
// refused, and so is a file that is not a regular file or block device
// (opening a FIFO blocks, opening a tape or watchdog device acts) or
// that lies on a pseudo filesystem (/proc/kcore, /sys).
func FileOpener(ref Ref) (Transport, Format, error) {
	if proto := protocolOf(ref.Name); proto != "" {
		return nil, "", &Error{Name: ref.From, Cause: ErrBackingRefused,
			What: fmt.Sprintf("%s %q names the %q protocol, which QEMU would read instead of a local file", ref.Kind, ref.Name, proto),
			Hint: "only local files are followed; rebase the image onto a local file"}
	}
	name := ref.Name
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(ref.From), name)
	}
	f, err := openLocal(name)
	if err != nil {
		return nil, "", err
	}
	return rawFile{f}, ref.Format, nil
}

// protocolOf is the protocol QEMU reads name through ("json", "nbd",
// "file"...), or "": as QEMU's path_has_protocol says, a colon before
// any slash.
func protocolOf(name string) string {
	if i := strings.IndexAny(name, ":/"); i >= 0 && name[i] == ':' {
		return name[:i]
	}
	return ""
}

// rawFile is an *os.File that maps its holes (see data_linux.go).
type rawFile struct{ *os.File }

// mapperOf is t as a DataMapper: itself, or an *os.File's holes; nil
// when it cannot tell.
func mapperOf(t Transport) DataMapper {
	if f, ok := t.(*os.File); ok {
		t = rawFile{f}
	}
	m, _ := t.(DataMapper)
	return m
}

// transportSize is t's size: Size() if it has one, else the offset of its
// end.
func transportSize(t Transport) (int64, error) {
	if s, ok := t.(Sizer); ok {
		return s.Size()
	}
	if s, ok := t.(io.Seeker); ok {
		return s.Seek(0, io.SeekEnd)
	}
	return 0, fmt.Errorf("%s: cannot tell its size: %w", t.Name(), errors.ErrUnsupported)
}

// readFull reads exactly len(p) bytes at off, naming the file in the
// error. A read that ends early at EOF is an error here: callers check
// bounds first, so it means the file shrank under us.
func readFull(t Transport, p []byte, off int64) error {
	if len(p) == 0 {
		return nil // an empty table may sit at any offset: read nothing
	}
	n, err := t.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &IOError{Op: "read", Name: t.Name(), Off: off + int64(n), Err: err}
}
