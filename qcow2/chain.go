package qcow2

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// layer is one file of a backing chain as the image above reads it: a
// qcow2 *Image or a raw file.
type layer interface {
	Name() string
	Size() int64
	// readAt fills p from off; off+len(p) <= Size().
	readAt(p []byte, off int64) error
	// Extent is the run of one kind at off, before end <= Size().
	Extent(off, end int64) (Extent, error)
	format() Format
	close() error
}

func (im *Image) format() Format { return FormatQcow2 }
func (im *Image) close() error   { return im.Close() }

// openRefs opens the data file and the backing file the header names.
func (im *Image) openRefs(opts Options, seen *chainSeen, depth int) error {
	if opts.Guessed {
		if err := im.h.checkGuessed(im.name, depth); err != nil {
			return err
		}
	}
	if err := im.openDataFile(opts); err != nil {
		return err
	}
	return im.openBacking(opts, seen, depth)
}

// openDataFile opens the external data file, if the image has one.
func (im *Image) openDataFile(opts Options) error {
	h := im.h
	if h.Incompatible&incompatDataFile != 0 {
		t, _, err := im.openRef(opts, Ref{Kind: RefDataFile, Name: h.DataFile, Format: FormatRaw, From: im.name})
		if err != nil {
			return err
		}
		size, err := transportSize(t)
		if err != nil {
			return &Error{Name: t.Name(), Cause: ErrBackingRefused, What: "size of the data file unknown", Err: err}
		}
		im.data, im.dataSize, im.extData = t, size, true
		im.dataMapper = mapperOf(t)
	}
	return nil
}

// openBacking opens the backing chain, if the image has one.
func (im *Image) openBacking(opts Options, seen *chainSeen, depth int) error {
	h := im.h
	if h.BackingFile == "" {
		return nil
	}
	if depth+1 > opts.MaxDepth {
		return &Error{Name: im.name, Cause: ErrChainTooDeep,
			What: fmt.Sprintf("more than %d backing files", opts.MaxDepth),
			Hint: "flatten the chain with qemu-img convert, or allow a deeper chain"}
	}
	t, format, err := im.openRef(opts, Ref{Kind: RefBacking, Name: h.BackingFile, Format: h.BackingFormat, From: im.name})
	if err != nil {
		return err
	}
	b, err := openLayer(t, format, opts, seen, depth+1)
	if err != nil {
		return err
	}
	im.backing = b
	return nil
}

// openRef asks the Opener for a file the image names, and keeps it to
// close.
func (im *Image) openRef(opts Options, ref Ref) (Transport, Format, error) {
	if opts.Opener == nil {
		return nil, "", &Error{Name: im.name, Cause: ErrBackingRefused,
			What: fmt.Sprintf("%s %q not followed", ref.Kind, ref.Name),
			Hint: "this caller opens no files an image names"}
	}
	t, format, err := opts.Opener(ref)
	if err != nil {
		if IsRefusal(err) {
			return nil, "", err
		}
		return nil, "", &Error{Name: im.name, Cause: ErrBackingRefused,
			What: fmt.Sprintf("%s %q", ref.Kind, ref.Name), Err: err}
	}
	if c, ok := t.(io.Closer); ok {
		im.closers = append(im.closers, c)
	}
	return t, format, nil
}

// openLayer opens a backing file in format ("" probes the magic, and
// holds the file to Options.Guessed's rule).
func openLayer(t Transport, format Format, opts Options, seen *chainSeen, depth int) (layer, error) {
	opts.Guessed = format == ""
	if format == "" {
		format = probe(t)
	}
	switch format {
	case FormatQcow2:
		return openDepth(t, opts, seen, depth)
	case FormatRaw:
		if err := seen.add(t); err != nil {
			return nil, err
		}
		size, err := transportSize(t)
		if err != nil {
			return nil, &Error{Name: t.Name(), Cause: ErrBackingRefused, What: "size unknown", Err: err}
		}
		return &rawLayer{t: t, size: size}, nil
	}
	return nil, &Error{Name: t.Name(), Cause: ErrUnsupported,
		What: fmt.Sprintf("backing file format %q", format),
		Hint: "only qcow2 and raw backing files are read; rebase the image with qemu-img rebase"}
}

// checkGuessed refuses an image whose format was guessed (see
// Options.Guessed) and that names another file.
func (h *Header) checkGuessed(name string, depth int) error {
	kind, ref := RefBacking, h.BackingFile
	if h.Incompatible&incompatDataFile != 0 {
		kind, ref = RefDataFile, h.DataFile
	}
	if ref == "" {
		return nil
	}
	hint := "say it is qcow2 to follow the names it holds, or read it as raw"
	if depth > 0 {
		hint = "record the backing format in the image above: qemu-img rebase -u -F qcow2 (or raw) -b NAME"
	}
	return &Error{Name: name, Cause: ErrBackingRefused,
		What: fmt.Sprintf("%s %q not followed: the image's format was guessed from its first bytes, and a raw disk whose guest wrote a qcow2 header looks the same", kind, ref),
		Hint: hint}
}

// probe tells qcow2 by its magic; anything else is raw, as QEMU's probe
// would say for a file with no known magic.
func probe(t Transport) Format {
	var b [4]byte
	if n, _ := t.ReadAt(b[:], 0); n == 4 && binary.BigEndian.Uint32(b[:]) == magic {
		return FormatQcow2
	}
	return FormatRaw
}

// chainSeen is the files of a chain so far, to find a loop: by identity
// (device and inode) where the Transport can stat, else by name.
type chainSeen struct {
	infos []os.FileInfo
	names []string
}

type stater interface{ Stat() (os.FileInfo, error) }

func (s *chainSeen) add(t Transport) error {
	name := t.Name()
	if abs, err := filepath.Abs(name); err == nil {
		name = abs
	}
	var fi os.FileInfo
	if st, ok := t.(stater); ok {
		fi, _ = st.Stat()
	}
	for i, n := range s.names {
		same := n == name
		if fi != nil && s.infos[i] != nil {
			same = os.SameFile(fi, s.infos[i])
		}
		if same {
			return &Error{Name: t.Name(), Cause: ErrBackingLoop,
				What: fmt.Sprintf("file %d of the chain is file %d again", len(s.names), i),
				Hint: "fix the backing file names with qemu-img rebase -u"}
		}
	}
	s.names = append(s.names, name)
	s.infos = append(s.infos, fi)
	return nil
}

// rawLayer is a raw backing file: its bytes are the guest's.
type rawLayer struct {
	t    Transport
	size int64
}

func (r *rawLayer) Name() string   { return r.t.Name() }
func (r *rawLayer) Size() int64    { return r.size }
func (r *rawLayer) format() Format { return FormatRaw }
func (r *rawLayer) close() error   { return nil } // the Opener's file: closed by the image above

func (r *rawLayer) readAt(p []byte, off int64) error {
	return readClipped(r.t, p, off, r.size)
}

// Extent of a raw file: data, or a hole where the Transport maps one.
func (r *rawLayer) Extent(off, end int64) (Extent, error) {
	m := mapperOf(r.t)
	if m == nil {
		return Extent{Off: off, Len: end - off, Kind: KindData}, nil
	}
	start, stop, err := m.Data(off, end)
	switch {
	case err != nil || start < off || stop > end || start > stop || stop == off:
		// It cannot tell, or tells nonsense: all data, which is safe.
		return Extent{Off: off, Len: end - off, Kind: KindData}, nil
	case start == stop:
		// No data before stop (before end when it looked no further).
		return Extent{Off: off, Len: stop - off, Kind: KindHole}, nil
	case start > off:
		return Extent{Off: off, Len: start - off, Kind: KindHole}, nil
	}
	return Extent{Off: off, Len: stop - off, Kind: KindData}, nil
}

// readClipped reads p at off from t, whose bytes end at size: what lies
// past size reads as zeros (a data file or cluster the file does not
// reach, as QEMU reads past a file's end).
func readClipped(t Transport, p []byte, off, size int64) error {
	n := int64(len(p))
	if off >= size {
		clear(p)
		return nil
	}
	if off+n > size {
		clear(p[size-off:])
		p = p[:size-off]
	}
	return readFull(t, p, off)
}
