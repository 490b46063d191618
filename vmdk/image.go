package vmdk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Transport is the image file: random-access bytes with a name (for
// errors) and a size.
type Transport interface {
	io.ReaderAt
	Name() string
	Size() (int64, error)
}

// Image is an open sparse vmdk image; its methods are safe for
// concurrent use.
type Image struct {
	t        Transport
	name     string
	fileSize int64
	h        *Header
	size     int64 // the guest's bytes
	grain    int64 // bytes per grain
	perGT    int64 // entries per grain table
	// gd is each grain directory entry's table in gts, -1 for none:
	// memory in proportion to the file, whatever size the header claims.
	gd       []int32
	gts      [][]uint32
	zeroGTE  bool
	compress bool
	stream   bool // streamOptimized: markers
}

// Open reads the image on t: its header (the footer's, for a
// streamOptimized image), its descriptor, and every grain table.
func Open(t Transport) (*Image, error) {
	name := t.Name()
	fileSize, err := t.Size()
	if err != nil {
		return nil, &Error{Name: name, Cause: ErrMalformed, What: "size unknown", Err: err}
	}
	first := make([]byte, headerLen)
	if n, _ := t.ReadAt(first, 0); n < headerLen {
		return nil, sniffOther(name, first[:n])
	}
	h, err := parseHeader(name, first)
	if err != nil {
		return nil, sniffOther(name, first)
	}
	if h.GDOffset == gdAtEnd {
		if h, err = readFooter(name, t, fileSize); err != nil {
			return nil, err
		}
	}
	if err := h.check(name); err != nil {
		return nil, err
	}
	if h.UncleanShutdown {
		return nil, &Error{Name: name, Cause: ErrUnsupported, What: "its unclean shutdown flag is set: a program wrote it and did not close it",
			Hint: "check it with qemu-img check, or convert it with qemu-img convert -O raw"}
	}
	if _, err := h.descriptor(name, t, fileSize); err != nil {
		return nil, err
	}
	// QEMU inflates grains by the algorithm alone: the flag for
	// compressed grains may be clear (check refuses it set with no
	// deflate, which QEMU would read as plain grains).
	im := &Image{t: t, name: name, fileSize: fileSize, h: h,
		size: int64(h.Capacity) * sector, grain: int64(h.GrainSize) * sector, perGT: int64(h.NumGTEsPerGT),
		zeroGTE: h.Flags&flagZeroGTE != 0, compress: h.CompressAlgo == compressDeflate, stream: h.Flags&flagMarkers != 0}
	if err := im.readTables(); err != nil {
		return nil, err
	}
	return im, nil
}

// sniffOther names the vmdk kinds that are not a sparse extent.
func sniffOther(name string, b []byte) error {
	switch {
	case bytes.HasPrefix(b, []byte("COWD")):
		return &Error{Name: name, Cause: ErrUnsupported, What: "an ESX sparse (COWD) image",
			Hint: "convert it with qemu-img convert -f vmdk -O raw"}
	case bytes.Contains(b, []byte("# Disk DescriptorFile")):
		return &Error{Name: name, Cause: ErrUnsupported, What: "a descriptor file whose extents are other files (monolithicFlat, twoGbMaxExtent*, vmfs)",
			Hint: "read its flat extent as raw, or convert it with qemu-img convert -f vmdk -O raw"}
	}
	return &Error{Name: name, Cause: ErrNotVMDK, What: "no KDMV magic"}
}

// readFooter reads the header a streamOptimized image keeps at its end,
// behind a footer marker and before the end-of-stream marker.
func readFooter(name string, t Transport, fileSize int64) (*Header, error) {
	if fileSize < 3*sector+headerLen {
		return nil, malformed(name, "streamOptimized image of %d bytes has no room for its footer", fileSize)
	}
	b := make([]byte, 3*sector)
	if _, err := t.ReadAt(b, fileSize-3*sector); err != nil && err != io.EOF {
		return nil, &Error{Name: name, Cause: ErrMalformed, What: "footer unreadable", Err: err}
	}
	le := binary.LittleEndian
	eos := b[2*sector:]
	if le.Uint32(b[8:]) != 0 || le.Uint32(b[12:]) != markerFooter ||
		le.Uint64(eos) != 0 || le.Uint32(eos[8:]) != 0 || le.Uint32(eos[12:]) != markerEOS {
		return nil, malformed(name, "no footer marker before the footer, or no end-of-stream marker after it")
	}
	h, err := parseHeader(name, b[sector:2*sector])
	if err != nil {
		return nil, malformed(name, "no KDMV magic in the footer")
	}
	if h.GDOffset == gdAtEnd {
		return nil, malformed(name, "the footer does not say where the grain directory is")
	}
	return h, nil
}

// readTables reads the grain directory and every grain table into gte,
// each checked to lie inside the file, no two tables overlapping (else a
// small file could make the tables cost memory out of proportion).
func (im *Image) readTables() error {
	grains := ceilDiv(im.size, im.grain)
	nGD := ceilDiv(grains, im.perGT)
	if nGD*4 > min(maxDirSize, im.fileSize) {
		return malformed(im.name, "a grain directory of %d entries cannot fit in a file of %d bytes", nGD, im.fileSize)
	}
	gd := make([]byte, nGD*4)
	if err := im.readIn("grain directory", gd, int64(im.h.GDOffset)*sector); err != nil {
		return err
	}
	type table struct{ i, off int64 }
	var tables []table
	for i := range nGD {
		if s := int64(binary.LittleEndian.Uint32(gd[i*4:])); s != 0 {
			tables = append(tables, table{i, s * sector})
		}
	}
	if int64(len(tables))*im.perGT*4 > im.fileSize {
		return malformed(im.name, "%d grain tables cannot fit in a file of %d bytes", len(tables), im.fileSize)
	}
	sort.Slice(tables, func(a, b int) bool { return tables[a].off < tables[b].off })
	for k := 1; k < len(tables); k++ {
		if tables[k].off < tables[k-1].off+im.perGT*4 {
			return malformed(im.name, "grain tables %d and %d overlap", tables[k-1].i, tables[k].i)
		}
	}
	im.gd = make([]int32, nGD)
	for i := range im.gd {
		im.gd[i] = -1
	}
	b := make([]byte, im.perGT*4)
	for _, tb := range tables {
		if err := im.readIn(fmt.Sprintf("grain table %d", tb.i), b, tb.off); err != nil {
			return err
		}
		gt := make([]uint32, im.perGT)
		for j := range im.perGT {
			e := binary.LittleEndian.Uint32(b[j*4:])
			if g := tb.i*im.perGT + j; g < grains {
				if err := im.checkGrain(g, e); err != nil {
					return err
				}
				gt[j] = e
			}
		}
		im.gd[tb.i] = int32(len(im.gts))
		im.gts = append(im.gts, gt)
	}
	return nil
}

// entry is grain g's table entry: 0 when its table has none.
func (im *Image) entry(g int64) uint32 {
	t := im.gd[g/im.perGT]
	if t < 0 {
		return 0
	}
	return im.gts[t][g%im.perGT]
}

// checkGrain checks that grain g's entry names a place inside the file.
func (im *Image) checkGrain(g int64, e uint32) error {
	if e == 0 || e == 1 && im.zeroGTE {
		return nil
	}
	if int64(e)*sector >= im.fileSize {
		return malformed(im.name, "grain %d at sector %d lies past the end of the file (%d bytes)", g, e, im.fileSize)
	}
	return nil
}

// readIn reads what of p lies inside the file at off, refusing p if it
// does not.
func (im *Image) readIn(what string, p []byte, off int64) error {
	if off <= 0 || off > im.fileSize || int64(len(p)) > im.fileSize-off {
		return malformed(im.name, "%s at offset %d (%d bytes) lies outside the file of %d bytes", what, off, len(p), im.fileSize)
	}
	if n, err := im.t.ReadAt(p, off); n < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return &Error{Name: im.name, Cause: ErrMalformed, What: what + " unreadable", Err: err}
	}
	return nil
}

// Size is the guest's size in bytes.
func (im *Image) Size() int64 { return im.size }

// Name is the Transport's name.
func (im *Image) Name() string { return im.name }

// GrainSize is the image's grain size in bytes.
func (im *Image) GrainSize() int64 { return im.grain }

// Kind says which kind of sparse image it is, as qemu-img names it.
func (im *Image) Kind() string {
	if im.stream {
		return "streamOptimized"
	}
	return "monolithicSparse"
}

// Header is the header as read (the footer's, streamOptimized).
func (im *Image) Header() *Header { return im.h }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

var errNegative = errors.New("vmdk: negative offset")
