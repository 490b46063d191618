package copier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/vmdk"
	"golang.org/x/sys/unix"
)

// vmdkSrc is a sparse vmdk image read as SRC (monolithicSparse and
// streamOptimized, the kinds an OVA carries): its guest's bytes, through
// package vmdk, over the base end that holds the file. It is a qcow2
// SRC's layer (imageSrc: the base end's checks, identity, locks,
// overlap) with another reader: a vmdk names no other file, so it has no
// chain. Other vmdk kinds (a descriptor with extents of its own, ESX
// COWD) stay refused by the file kind's image check, with the qemu-img
// line that converts them.
type vmdkSrc struct{ *imageSrc }

// sniffVmdk says whether the end starts with a sparse extent's magic.
func sniffVmdk(rr randomReader) (bool, error) {
	r, size, done, err := rr.readerAt()
	if err != nil {
		return false, err
	}
	defer done()
	if size < 4 {
		return false, nil
	}
	var head [4]byte
	if n, err := r.ReadAt(head[:], 0); n < len(head) {
		if err == io.EOF {
			err = nil
		}
		return false, err
	}
	return string(head[:]) == "KDMV", nil
}

// withVmdk puts a vmdk reader over ep when it is a sparse vmdk image
// (format auto or vmdk), or refuses what is not one (format vmdk); done
// false leaves ep to the qcow2 layer (withFormat).
func (p *Plan) withVmdk(ep *endpoint, r role, rr randomReader, format string) (_ *endpoint, done bool, _ error) {
	if format != FormatAuto && format != FormatVmdk {
		return ep, false, nil
	}
	isVmdk, err := sniffVmdk(rr)
	switch {
	case err != nil && format == FormatVmdk:
		return ep, true, refuseErr(KindCheckFailed, ep.path, "cannot read its first bytes", err).on(r.field())
	case !isVmdk && format == FormatVmdk:
		return ep, true, refuse(KindBadInput, ep.path, "is not a sparse vmdk image (no KDMV magic): Options.SrcFormat raw copies its bytes").on("SrcFormat")
	case !isVmdk:
		return ep, false, nil // auto: the qcow2 layer's sniff, or its bytes as they are
	}
	vep, err := newVmdkSrc(p, ep, r)
	return vep, true, err
}

// newVmdkSrc opens the image on base to check it and learn its size.
func newVmdkSrc(p *Plan, base *endpoint, r role) (*endpoint, error) {
	ra, size, done, err := base.end.(randomReader).readerAt()
	if err != nil {
		return base, refuseErr(KindCheckFailed, base.path, "cannot read the image", err).on(r.field())
	}
	defer done()
	im, err := openVmdk(hostFile{ra, base.path, size}, r.field())
	if err != nil {
		return base, err
	}
	_, local := ra.(*os.File)
	s := &vmdkSrc{&imageSrc{end: base.end, under: base, local: local}}
	ep := &endpoint{end: s, path: base.path, role: r, exists: true}
	s.ep, s.about = ep, describeVmdk(im)
	ep.geo = align.Geometry{Path: base.path, Size: im.Size(), MemAlign: 1, OffsetAlign: 1,
		OptimalIO: int(max(im.GrainSize(), 1<<20))}
	ep.endFacts = endFacts{what: "vmdk image", ownIO: true, mapsHoles: true, readBackMaps: true,
		disk: base.disk, onDisk: base.onDisk}
	p.note("%s %s: %s", r.tag(), base.path, s.about)
	return ep, nil
}

func describeVmdk(im *vmdk.Image) string {
	return fmt.Sprintf("vmdk %s, virtual size %d, grain size %d", im.Kind(), im.Size(), im.GrainSize())
}

// openVmdk opens the image; a refusal becomes one of the copy's.
func openVmdk(t vmdk.Transport, field string) (*vmdk.Image, error) {
	im, err := vmdk.Open(t)
	if err == nil {
		return im, nil
	}
	var ve *vmdk.Error
	if errors.As(err, &ve) {
		return nil, &RefusedError{Kind: KindImageFormat, Path: ve.Name, Field: field, Reason: strings.TrimPrefix(ve.Error(), ve.Name+": "), Err: err}
	}
	return nil, refuseErr(KindCheckFailed, t.Name(), "cannot read the vmdk image", err).on(field)
}

// srcData is where the guest's data is in the range, from the grain
// tables.
func (s *vmdkSrc) srcData(p *Plan) (srcData, error) {
	ra, size, done, err := s.end.(randomReader).readerAt()
	if err != nil {
		return srcData{}, err
	}
	im, err := openVmdk(hostFile{ra, s.under.path, size}, "Src")
	if err != nil {
		done()
		return srcData{}, err
	}
	var ext guard.Extents
	for off, end := p.opts.SrcOffset, p.opts.SrcOffset+p.Length; off < end; {
		start, stop, _ := im.Data(off, end)
		if start < stop {
			ext = append(ext, guard.Extent{Off: start, N: stop - start})
		}
		if stop <= off {
			break
		}
		off = stop
	}
	return srcData{ext: ext, read: im, close: done}, nil
}

// open opens the base end, then the image on it, checked again.
func (s *vmdkSrc) open(p *Plan, rep *Report) (*held, error) {
	h, err := s.end.open(p, rep)
	if err != nil {
		return nil, err
	}
	ra, err := readerOf(h)
	if err != nil {
		h.close()
		return nil, err
	}
	im, err := openVmdk(hostOf(s.under, ra), s.ep.role.field())
	if err != nil {
		h.close()
		return nil, err
	}
	s.opened = h
	x := &vmdkReader{im: im, name: s.ep.path, about: s.about}
	return &held{io: x, align: 1, cause: firstOf(h.cause, x.met), release: h.close, unchanged: h.srcUnchanged}, nil
}

// vmdkReader is an open vmdk image as the engine reads it.
type vmdkReader struct {
	im         *vmdk.Image
	name       string
	about      string
	firstCause // the image's own first error (a grain that does not inflate)
}

var _ engine.IOEnd = (*vmdkReader)(nil)

func (x *vmdkReader) Name() string                              { return x.name }
func (x *vmdkReader) Data(off, end int64) (int64, int64, error) { return x.im.Data(off, end) }
func (x *vmdkReader) Settle() error                             { return nil }
func (x *vmdkReader) Reserve(int64, int64, bool) error          { return unix.EBADF }
func (x *vmdkReader) Truncate(int64) error                      { return unix.EBADF }
func (x *vmdkReader) PrepareTail() error                        { return nil }
func (x *vmdkReader) WriteAt([]byte, int64) (int, error)        { return 0, unix.EBADF }
func (x *vmdkReader) Zero(int64, int64, bool) error             { return unix.EBADF }
func (x *vmdkReader) Flush() error                              { return nil }

// ReadAt reads the guest's bytes, keeping the image's first error.
func (x *vmdkReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := x.im.ReadAt(p, off)
	x.keep(err)
	return n, err
}

func (x *vmdkReader) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "vmdk", Detail: x.name + ": " + x.about}
}
