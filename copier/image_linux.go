package copier

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ringcp/ringcp/qcow2"
)

// An image format is a layer over a kind of end, not a kind of its own:
// the kind moves the host file's bytes (a local file or device, and any
// kind whose end reads at any offset: an HTTP or S3 object), the format
// maps the guest's bytes onto them (DESIGN.md: transport and format kept
// apart). So one qcow2 reader serves every kind, and what depends on the
// kind (identity, locks, overlap, a new file's lifecycle) stays the
// kind's: the layer asks its base end, and answers for the guest's bytes
// itself (size, where the data is, reads and writes). image_src_linux.go
// reads an image SRC, image_dst_linux.go makes an image DST.

// layered is an end that is a format over a base end of some kind.
type layered interface{ base() *endpoint }

// baseOf is the end beneath a format layer, or ep itself: what checks of
// identity and overlap compare (a qcow2 SRC and a raw DST may be one
// file).
func baseOf(ep *endpoint) *endpoint {
	if l, ok := ep.end.(layered); ok {
		return l.base()
	}
	return ep
}

// randomReader is a base end whose bytes Prepare can read at any offset
// (a file or a device, an object over HTTP), so that a format looks at
// its header and tables. close releases what readerAt opened.
type randomReader interface {
	readerAt() (r io.ReaderAt, size int64, close func(), err error)
}

// withFormat puts the format the options give for end r over ep, the
// end its kind inspected: a qcow2 reader over a SRC (and over both ends
// of a read pass) that is one, a qcow2 writer over a DST asked to be one.
// Other ends are returned as they are.
func (p *Plan) withFormat(ep *endpoint, r role) (*endpoint, error) {
	o := &p.opts
	if r == roleDst && !p.readOnly {
		if o.DstFormat != FormatQcow2 {
			return ep, nil
		}
		return newImageDst(p, ep)
	}
	format := o.SrcFormat
	if r == roleDst {
		format = p.readDstFormat // a read pass's second end
	}
	if format == "" {
		format = FormatAuto
	}
	if format == FormatRaw {
		return ep, nil
	}
	rr, ok := ep.end.(randomReader)
	if !ok {
		if format == FormatQcow2 || format == FormatVmdk {
			return ep, refuse(KindNotSupported, ep.path, fmt.Sprintf("ringcp reads a %s image at any offset, and cannot read a %s so", format, ep.what)).on(r.field() + "Format")
		}
		return ep, nil
	}
	// What the kind refuses whatever the range (a file on a pseudo
	// filesystem) is refused before its bytes are read.
	if err := ep.checkAlone(p); err != nil {
		return ep, err
	}
	if vep, done, err := p.withVmdk(ep, r, rr, format); done {
		return vep, err // a sparse vmdk (image_vmdk_linux.go)
	}
	isImage, err := sniffQcow2(rr)
	switch {
	case err != nil && format == FormatQcow2:
		return ep, refuseErr(KindCheckFailed, ep.path, "cannot read its first bytes", err).on(r.field())
	case err != nil:
		// Auto: the copy itself meets the failure, and says where.
		p.note("%s %s: its first bytes could not be read to tell its format (%v): read as raw", r.tag(), ep.path, err)
		return ep, nil
	case !isImage && format == FormatQcow2:
		return ep, refuse(KindBadInput, ep.path, fmt.Sprintf("is not a qcow2 image (no QFI\\xfb magic): Options.%sFormat raw copies its bytes", r.field())).on(r.field() + "Format")
	case !isImage:
		return ep, nil
	}
	// Guessed from the magic: the image may be a raw disk whose guest
	// wrote a qcow2 header, so the files it names are not followed.
	return newImageSrc(p, ep, r, format == FormatAuto)
}

// sniffQcow2 says whether the end starts with qcow2's magic and a
// version qcow2 has (2 or 3; version 1, qcow, is another format).
func sniffQcow2(rr randomReader) (bool, error) {
	r, size, done, err := rr.readerAt()
	if err != nil {
		return false, err
	}
	defer done()
	if size < 8 {
		return false, nil
	}
	var head [8]byte
	if n, err := r.ReadAt(head[:], 0); n < len(head) {
		if err == io.EOF {
			err = nil // shorter than its size said: the copy will tell
		}
		return false, err
	}
	return isQcow2Head(head[:]), nil
}

// isQcow2Head says whether h starts as a qcow2 image does: its magic and
// a version ringcp reads (2 or 3, big-endian).
func isQcow2Head(h []byte) bool {
	if len(h) < 8 || !bytes.Equal(h[:4], []byte("QFI\xfb")) {
		return false
	}
	v := uint32(h[4])<<24 | uint32(h[5])<<16 | uint32(h[6])<<8 | uint32(h[7])
	return v == 2 || v == 3
}

// hostFile is the host file beneath an image as qcow2 reads it: the base
// end's bytes, its name (what relative backing names resolve against),
// its size.
type hostFile struct {
	io.ReaderAt
	name string
	size int64
}

func (h hostFile) Name() string         { return h.name }
func (h hostFile) Size() (int64, error) { return h.size, nil }

// Prefetch passes what the image announces on to the bytes beneath (an
// object's cache, end_web_cache_linux.go).
func (h hostFile) Prefetch(r []qcow2.Range) { prefetchOn(h.ReaderAt, r) }

// prefetchOn hands r to at when it is a qcow2.Prefetcher.
func prefetchOn(at io.ReaderAt, r []qcow2.Range) {
	if p, ok := at.(qcow2.Prefetcher); ok {
		p.Prefetch(r)
	}
}

// hostOf is ep's bytes, read through r, as qcow2's Transport.
func hostOf(ep *endpoint, r io.ReaderAt) hostFile { return hostFile{r, ep.path, ep.geo.Size} }

// openImage opens the image on t with its chain through opts.Opener
// (local files, relative names against t's folder, as QEMU does); a
// refusal of the format becomes one of the copy's, naming what to do.
func openImage(t qcow2.Transport, opts qcow2.Options, field string) (*qcow2.Image, error) {
	im, err := qcow2.Open(t, opts)
	if err == nil {
		return im, nil
	}
	var qe *qcow2.Error
	if errors.As(err, &qe) {
		// An image ringcp cannot read as its guest sees it (encrypted,
		// dirty, damaged, a chain it will not follow) is refused as every
		// container it does not read is. The refusal names the file at
		// fault: the image, or a file of its chain.
		return nil, &RefusedError{Kind: KindImageFormat, Path: qe.Name, Field: field, Reason: strings.TrimPrefix(qe.Error(), qe.Name+": "), Err: err}
	}
	return nil, refuseErr(KindCheckFailed, t.Name(), "cannot read the qcow2 image", err).on(field)
}
