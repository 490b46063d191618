package copier

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/qcow2"
	"golang.org/x/sys/unix"
)

// imageUpdate is an existing qcow2 image written as DST
// (Options.DstFormat qcow2 on an image that exists), as qemu-img convert
// -n writes one: the guest's bytes are SRC's, and the image keeps its
// format, its options and its backing file. The engine writes through
// an imageUpdater (an engine.IOEnd over qcow2.Updater, which the pool
// serves): clusters the image stores alone are overwritten where they
// are, others get new host clusters, and SRC's holes and zeros become
// zero clusters. The tables are written when the copy completes, in an
// order that leaves at most leaked clusters after a crash; a copy that
// fails leaves the image's metadata as it was, with the data written in
// place so far (as a raw DST keeps what was written).
//
// The base end (the file kind) answers for the host file: locks, in
// use, writable, identity, overlap. The image is never cut nor grown
// beyond what new clusters take: its virtual size is fixed, and must be
// SRC's for a whole copy.
type imageUpdate struct {
	end
	ep    *endpoint
	under *endpoint
	size  int64 // the virtual size
}

var _ layered = (*imageUpdate)(nil)

func (u *imageUpdate) base() *endpoint { return u.under }

// newImageUpdate checks that the existing DST is a qcow2 image ringcp
// can write into, and learns its virtual size.
func newImageUpdate(p *Plan, base *endpoint) (*endpoint, error) {
	if err := refuseUpdateResume(p, base); err != nil {
		return base, err
	}
	rr, ok := base.end.(randomReader)
	if !ok {
		return base, refuse(KindNotSupported, base.path, fmt.Sprintf("exists (a %s): ringcp writes into an existing qcow2 image only on a local file or device", base.what)).on("Dst")
	}
	ra, size, done, err := rr.readerAt()
	if err != nil {
		return base, refuseErr(KindCheckFailed, base.path, "cannot read the image", err).on("Dst")
	}
	defer done()
	if _, local := ra.(*os.File); !local {
		return base, refuse(KindNotSupported, base.path, fmt.Sprintf("exists (a %s): ringcp writes into an existing qcow2 image only on a local file or device", base.what)).on("Dst")
	}
	if isImage, _ := sniffQcow2(rr); !isImage {
		return base, refuse(KindBadInput, base.path, fmt.Sprintf("exists (a %s) and is not a qcow2 image: Options.DstFormat qcow2 writes into an existing image, or makes a new one under a name that does not exist yet", base.what)).on("Dst")
	}
	if p.opts.Qcow2 != (Qcow2Options{}) {
		return base, refuse(KindBadInput, base.path, fmt.Sprintf("exists (a qcow2 image), and Options.Qcow2.%s is for a new image: an existing one keeps its own options", p.opts.Qcow2.setField())).on("Qcow2." + p.opts.Qcow2.setField())
	}
	im, err := openImage(hostFile{ra, base.path, size}, qcow2.Options{Opener: qcow2.FileOpener}, "Dst")
	if err != nil {
		return base, err
	}
	defer im.Close()
	if err := qcow2.Updatable(im); err != nil {
		return base, imageRefusal(err, "Dst")
	}
	u := &imageUpdate{end: base.end, under: base, size: im.Size()}
	ep := &endpoint{end: u, path: base.path, role: roleDst, exists: true}
	u.ep = ep
	cs := im.ClusterSize()
	// Zero clusters cost a table entry: zero detection is worth it
	// (WriteZeroesMax), in whole clusters.
	ep.geo = align.Geometry{Path: base.path, Size: im.Size(), MemAlign: 1, OffsetAlign: 1,
		OptimalIO: int(max(cs, 1<<20)), WriteZeroesMax: 1 << 30}
	ep.endFacts = endFacts{what: "qcow2 image", ownIO: true, fixedSize: true, readsFile: true, zeroUnit: int(cs),
		zeroUnitWhat: "the image's cluster size", disk: base.disk, onDisk: base.onDisk}
	p.note("DST %s: %s, written in place as its guest's bytes (as qemu-img convert -n)", base.path, describeImage(im))
	return ep, nil
}

// imageRefusal is a qcow2 refusal as one of the copy's.
func imageRefusal(err error, field string) error {
	var qe *qcow2.Error
	if errors.As(err, &qe) {
		return &RefusedError{Kind: KindImageFormat, Path: qe.Name, Field: field, Reason: strings.TrimPrefix(qe.Error(), qe.Name+": "), Err: err}
	}
	return err
}

// check: the base end's checks of the host file, then that a whole copy
// fills the virtual size (a range must fit in it: checkDestSize).
func (u *imageUpdate) check(p *Plan) error {
	if err := u.end.check(p); err != nil {
		return err
	}
	o := &p.opts
	whole := !o.LengthSet && o.SrcOffset == 0 && o.DstOffset == 0
	if whole && align.RoundUp(p.Length, 512) < u.size { // a smaller one: checkDestSize
		return refuse(KindBadInput, u.ep.path, fmt.Sprintf("is a qcow2 image of virtual size %d, and SRC has %d bytes: resize it (qemu-img resize), or copy a range (Options.Length)", u.size, p.Length)).on("Dst")
	}
	return nil
}

// same, overlap: the host file's.
func (u *imageUpdate) same(o *endpoint) (bool, string) { return u.end.same(baseOf(o)) }
func (u *imageUpdate) overlap(_ byteRange, o *endpoint, _ byteRange) *overlap {
	return u.end.overlap(byteRange{0, -1}, baseOf(o), byteRange{0, -1})
}

// openDst opens the host file as the file kind does (locks, checks),
// and the image on it for writing, checked again.
func (u *imageUpdate) openDst(p *Plan, rep *Report) (target, error) {
	t, err := u.end.openDst(p, rep)
	if err != nil {
		return nil, err
	}
	file := t.held().f
	if file == nil {
		t.release()
		return nil, refuse(KindNotSupported, u.ep.path, "an existing qcow2 DST is a local file or device").on("Dst")
	}
	upd, err := qcow2.OpenUpdater(imageFile{file, u.ep.path}, qcow2.Options{Opener: qcow2.FileOpener})
	if err != nil {
		t.release()
		return nil, imageRefusal(err, "Dst")
	}
	if upd.Size() != u.size {
		upd.Close()
		t.release()
		return nil, refuse(KindChanged, u.ep.path, fmt.Sprintf("its virtual size is %d now, %d when the copy was prepared", upd.Size(), u.size)).on("Dst")
	}
	x := &imageUpdater{u: upd, f: file, name: u.ep.path, about: describeImage(upd.Image()),
		pad: p.opts.DstOffset + p.Length}
	if x.pad < u.size && (p.opts.LengthSet || p.opts.DstOffset != 0) {
		x.pad = u.size // a range: the rest of the guest stays as it is
	}
	rep.note("DST %s: %s, written in place", u.ep.path, x.about)
	return &updateTarget{target: t, x: x, h: held{io: x, align: 1}}, nil
}

// updateTarget is an existing qcow2 DST as Run holds it.
type updateTarget struct {
	target
	x *imageUpdater
	h held
}

func (t *updateTarget) held() *held                    { return &t.h }
func (t *updateTarget) shape(p *Plan, job *engine.Job) {} // the virtual size is the image's
func (t *updateTarget) cut(p *Plan) error              { return nil }

// publish writes the image's metadata, then does what the file kind
// does for a DST that existed.
func (t *updateTarget) publish(p *Plan, sync bool) error {
	if err := t.x.finish(); err != nil {
		return err
	}
	return t.target.publish(p, sync)
}

// left: what the file kind says, but the image's tables are written
// only when the copy completes (finish), so after a stop or a failure
// the guest reads the copy's bytes only below the first cluster whose
// entry the copy changed (qcow2.Updater.Pending); past it, the old
// bytes. The prefix DST holds ends there.
func (t *updateTarget) left(p *Plan, rep *Report) DstState {
	st := t.target.left(p, rep)
	if !t.x.done || t.x.err != nil {
		rep.Contiguous = max(0, min(rep.Contiguous, t.x.u.Pending()-p.opts.DstOffset))
	}
	return st
}

// readBack finishes the image and reads it back from the storage
// through a reader of its own.
func (t *updateTarget) readBack(p *Plan) (string, error) {
	if err := t.x.finish(); err != nil {
		return "", err
	}
	fd := int(t.x.f.Fd())
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return "", &os.PathError{Op: "posix_fadvise(DONTNEED)", Path: t.x.name, Err: err}
	}
	im, err := openImage(imageFile{t.x.f, t.x.name}, qcow2.Options{Opener: qcow2.FileOpener}, "Dst")
	if err != nil {
		return "", err
	}
	t.x.read = im
	return "the image read back by ringcp's qcow2 reader, after its sync and posix_fadvise(DONTNEED)", nil
}

func (t *updateTarget) release() {
	if t.x.read != nil {
		t.x.read.Close()
	}
	if !t.x.done {
		t.x.u.Abandon()
	}
	t.target.release()
}

// refuseUpdateResume refuses Options.Resume into an existing qcow2 image:
// its tables are updated in place (qcow2.Updater), so a stopped copy can
// leave them naming clusters whose writes never reached the disk, and no
// checkpoint says what part of it was copied. A new image (a name that
// does not exist yet) is resumable (image_resume_linux.go).
func refuseUpdateResume(p *Plan, base *endpoint) error {
	r := p.resume
	switch {
	case r == nil:
		return nil
	case r.state != nil && r.state.Partial != "":
		// The partial image was renamed to DST: the earlier run
		// completed, and was stopped before it removed its state.
		return refuse(KindChanged, base.path, fmt.Sprintf("exists, and the resume state %s records a new image being made under %s: the earlier run renamed it when complete and was stopped before it removed the state; if DST is that image (qemu-img compare with SRC), remove the state, else remove both to start over", r.statePath, r.partial)).on("Resume")
	}
	return refuse(KindNotSupported, base.path, "exists (a qcow2 image): Options.Resume cannot resume writing into an existing qcow2 image, whose tables are updated in place with nothing that records which part was copied; run the copy without Options.Resume (it starts over), or resume into a new image (a DST name that does not exist yet)").on("Resume")
}
