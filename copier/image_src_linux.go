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
	"github.com/ringcp/ringcp/qcow2"
	"golang.org/x/sys/unix"
)

// imageSrc is a qcow2 image read as SRC (or as an end of a read pass):
// its guest's bytes, through package qcow2, over the base end that holds
// the image file. The engine reaches it as an engine.IOEnd (imageReader),
// which the pool serves: many requests in flight, each a run of clusters
// read with as few host reads as they allow, compressed clusters
// decompressed on the worker that asked for them, so on all cores. Its
// map (zero clusters, unallocated ones through the whole chain) is the
// engine's map of holes: they are not read, and not written on a DST
// that reads as zeros.
//
// The base end answers for the host file: its locks, its identity, what
// it shares with DST. The layer adds that DST must not be a file of the
// image's chain (a backing file, the data file), which the copy would
// change under its own reads.
type imageSrc struct {
	end             // the base end's answers where the layer has none of its own
	ep    *endpoint // the layer: the guest's size and facts
	under *endpoint // the base end: the host file
	chain []guard.Object
	about string // one line on the image, for the notes and IOInfo
	// local: the image is a local file or device, whose chain's names
	// are local files. Over another kind (an export, an object) the names
	// an image holds are not followed: a remote image must not make ringcp
	// read this host's files.
	local bool
	// guessed: the format was told by the magic bytes, not by the
	// options: an image that names a backing or data file is refused
	// (qcow2.Options.Guessed).
	guessed bool
	// remote, when the base end is an object at a URL, opens the chain's
	// files at URLs beside it (end_web_image_linux.go); nil otherwise.
	remote func() qcow2.Opener
	// opened is the base end's held as open last gave it, for lock.
	opened *held
}

var _ layered = (*imageSrc)(nil)

func (s *imageSrc) base() *endpoint { return s.under }

// newImageSrc opens the image on base to check it (and its chain) and to
// learn its size; it is closed again, and opened anew by open.
func newImageSrc(p *Plan, base *endpoint, r role, guessed bool) (*endpoint, error) {
	ra, size, done, err := base.end.(randomReader).readerAt()
	if err != nil {
		return base, refuseErr(KindCheckFailed, base.path, "cannot read the image", err).on(r.field())
	}
	defer done()
	_, local := ra.(*os.File)
	s := &imageSrc{end: base.end, under: base, local: local, guessed: guessed}
	if o, ok := base.end.(interface{ imageOpener() qcow2.Opener }); ok {
		s.remote = o.imageOpener
	}
	im, err := openImage(hostFile{ra, base.path, size}, qcow2.Options{Opener: s.chainOpener(), Guessed: guessed}, r.field())
	if err != nil {
		return base, guessedRefusal(err, guessed, r)
	}
	defer im.Close()
	ep := &endpoint{end: s, path: base.path, role: r, exists: true}
	s.ep, s.about = ep, describeImage(im)
	ep.geo = imageGeometry(base.path, im)
	ep.geo.OptimalIO = max(ep.geo.OptimalIO, base.geo.OptimalIO)
	ep.endFacts = endFacts{what: "qcow2 image", ownIO: true, mapsHoles: true, readBackMaps: true,
		disk: base.disk, onDisk: base.onDisk, conns: base.conns}
	p.note("%s %s: %s", r.tag(), base.path, s.about)
	return ep, nil
}

// guessedRefusal says what to do when an image whose format was guessed
// names a file: say its format.
func guessedRefusal(err error, guessed bool, r role) error {
	var refused *RefusedError
	var qe *qcow2.Error
	if !guessed || !errors.As(err, &refused) || !errors.As(err, &qe) || !errors.Is(err, qcow2.ErrBackingRefused) {
		return err
	}
	refused.Reason = fmt.Sprintf("%v: %s: Options.%[3]sFormat qcow2 says it is one (the files it names are then followed), Options.%[3]sFormat raw reads its bytes as they are", qe.Cause, qe.What, r.field())
	return err
}

// chainOpener is how the image's chain is opened: at URLs beside an
// image at a URL (remote), as local files when the image is one, else
// not at all.
func (s *imageSrc) chainOpener() qcow2.Opener {
	if s.remote != nil {
		return s.remote()
	}
	if !s.local {
		return nil
	}
	return s.opener
}

// opener opens the chain's files as qcow2.FileOpener does, and records
// what each is, for check.
func (s *imageSrc) opener(ref qcow2.Ref) (qcow2.Transport, qcow2.Format, error) {
	t, f, err := qcow2.FileOpener(ref)
	if err != nil {
		return t, f, err
	}
	if fd, ok := t.(interface{ Fd() uintptr }); ok {
		var st unix.Stat_t
		if unix.Fstat(int(fd.Fd()), &st) == nil {
			s.chain = append(s.chain, guard.ObjectOf(&st))
		}
	}
	return t, f, nil
}

// describeImage is one line on an image: what qemu-img info says first.
func describeImage(im *qcow2.Image) string {
	h := im.Header()
	line := fmt.Sprintf("qcow2 version %d, virtual size %d, cluster size %d", h.Version, im.Size(), im.ClusterSize())
	if h.BackingFile != "" {
		line += ", backing file " + h.BackingFile
	}
	return line
}

// imageGeometry: the guest's size; requests of a few MiB, so that a
// request is many clusters read in few host reads, and enough of them
// are in flight for every core to decompress.
func imageGeometry(path string, im *qcow2.Image) align.Geometry {
	return align.Geometry{Path: path, Size: im.Size(), MemAlign: 1, OffsetAlign: 1,
		OptimalIO: int(max(im.ClusterSize(), 1<<20))}
}

// localOpener is the remote opener for an image at a URL,
// qcow2.FileOpener for a local image, nil otherwise.
func (s *imageSrc) localOpener() qcow2.Opener {
	if s.remote != nil {
		return s.remote()
	}
	if !s.local {
		return nil
	}
	return qcow2.FileOpener
}

// check: the base end's checks of the host file (someone writing it),
// then that DST is neither the image's file nor a file of its chain
// (guest offsets are not the file's: any overlap is one).
func (s *imageSrc) check(p *Plan) error {
	if err := s.end.check(p); err != nil {
		return err
	}
	if s.ep.role != roleSrc {
		return nil
	}
	if same, _ := s.end.same(baseOf(p.dst)); same {
		return refuse(KindOverlap, p.opts.Dst, "DST is SRC's image file").on("Dst")
	}
	var st unix.Stat_t
	if !p.dst.exists || unix.Stat(baseOf(p.dst).path, &st) != nil {
		return nil // not a local file: no file of the chain
	}
	for _, o := range s.chain {
		if o == guard.ObjectOf(&st) {
			return refuse(KindOverlap, p.opts.Dst, "DST is a file of SRC's backing chain (a backing or data file): the copy would change what it reads").on("Dst")
		}
	}
	return nil
}

// same: the base ends are one file.
func (s *imageSrc) same(o *endpoint) (bool, string) { return s.end.same(baseOf(o)) }

// overlap: guest offsets are not host offsets, so any overlap of the host
// files is one of the whole image.
func (s *imageSrc) overlap(_ byteRange, o *endpoint, _ byteRange) *overlap {
	return s.end.overlap(byteRange{0, -1}, baseOf(o), byteRange{0, -1})
}

// srcData is where the guest's data is in the range, from the image's
// map, with the image to count zero blocks.
func (s *imageSrc) srcData(p *Plan) (srcData, error) {
	ra, size, done, err := s.end.(randomReader).readerAt()
	if err != nil {
		return srcData{}, err
	}
	// Prepare checked the metadata already: the map reads the tables it
	// needs, and the space check needs nothing more.
	im, err := openImage(hostFile{ra, s.under.path, size}, qcow2.Options{Opener: s.localOpener(), Lazy: true, Guessed: s.guessed}, "Src")
	if err != nil {
		done()
		return srcData{}, err
	}
	var ext guard.Extents
	for off, end := p.opts.SrcOffset, p.opts.SrcOffset+p.Length; off < end; {
		start, stop, err := im.Data(off, end)
		if err != nil {
			im.Close()
			done()
			return srcData{}, err
		}
		if start < stop {
			ext = append(ext, guard.Extent{Off: start, N: stop - start})
		}
		off = stop
	}
	return srcData{ext: ext, read: im, close: func() { im.Close(); done() }}, nil
}

// open opens the base end, then the image on it, checked again (it may
// have changed since Prepare).
func (s *imageSrc) open(p *Plan, rep *Report) (*held, error) {
	h, err := s.end.open(p, rep)
	if err != nil {
		return nil, err
	}
	ra, err := readerOf(h)
	if err != nil {
		h.close()
		return nil, err
	}
	// Checked in full again: the image may have changed since Prepare.
	watched := &watchedChain{host: h}
	im, err := openImage(hostOf(s.under, ra), qcow2.Options{Opener: s.watchedOpener(watched), Guessed: s.guessed}, s.ep.role.field())
	if err != nil {
		watched.close()
		h.close()
		return nil, err
	}
	s.opened = h
	x := &imageReader{im: im, name: s.ep.path, about: s.about}
	// The base's first cause (what a server said), else the image's, goes
	// with the copy's error. A stop, or the copy's failure, interrupts the
	// base's reads in flight.
	release := s.readDirect(h, im)
	return &held{io: x, align: 1, cause: firstOf(h.cause, x.met), interrupt: h.interrupt, release: func() { release(); watched.close() },
		unchanged: watched.unchanged}, nil
}

// watchedChain is what an image SRC's check at the end compares: the
// host file's end, and each local file of its chain as opened.
type watchedChain struct {
	host  *held
	files []*srcFile // added by watchedOpener as the image opens them
}

// unchanged checks the host file, then the chain's files (srcchanged_linux.go).
func (w *watchedChain) unchanged(c srcCheck) (string, error) {
	limit, err := w.host.srcUnchanged(c)
	if err != nil {
		return "", err
	}
	more, err := unchangedAll(w.files...)(c)
	if limit == "" || more == "" {
		return limit + more, err
	}
	return limit + "; " + more, err
}

// close closes what watching the chain's files opened of its own (a
// loop device's backing file, srcFile.close); the files themselves are
// the image's, closed with it.
func (w *watchedChain) close() {
	for _, f := range w.files {
		f.close()
	}
}

// namedFile is a transport that is a local file: a descriptor and a
// path.
type namedFile interface {
	fder
	Name() string
}

// watchedOpener is localOpener, recording each local file of the chain
// as opened into watched, so that the copy fails if one changes while it
// is read (srcchanged_linux.go). A file at a URL is pinned to its
// validator instead (end_web_linux.go).
func (s *imageSrc) watchedOpener(watched *watchedChain) qcow2.Opener {
	open := s.localOpener()
	if open == nil {
		return open
	}
	return func(ref qcow2.Ref) (qcow2.Transport, qcow2.Format, error) {
		t, format, err := open(ref)
		f, ok := t.(namedFile)
		if err != nil || !ok {
			return t, format, err
		}
		tag := s.ep.role.tag()
		what := fmt.Sprintf("%s, the %s of %s in %s's chain,", f.Name(), ref.Kind, ref.From, tag)
		if ref.From == s.under.path {
			what = fmt.Sprintf("%s's %s %s", tag, ref.Kind, f.Name())
		}
		w, err := watchSrc(f, f.Name(), 0, what)
		if err != nil {
			if c, ok := t.(io.Closer); ok {
				c.Close()
			}
			return nil, "", err
		}
		watched.files = append(watched.files, w)
		return t, format, nil
	}
}

// lock takes the base end's locks on the host file.
func (s *imageSrc) lock(p *Plan, _ *held, rep *Report) error { return s.end.lock(p, s.opened, rep) }

// readerOf is what a held base end reads through: its descriptor, or an
// IOEnd that reads at any offset.
func readerOf(h *held) (io.ReaderAt, error) {
	if h.f != nil {
		return h.f, nil
	}
	if h.io.IOInfo().Sequential {
		return nil, fmt.Errorf("%s: a qcow2 image is read at any offset, and this end reads only in order", h.io.Name())
	}
	return h.io, nil
}

// imageReader is an open qcow2 image as the engine reads it.
type imageReader struct {
	im    *qcow2.Image
	name  string
	about string
	// The image's own first error (a cluster that does not decompress,
	// named by its guest offset), which the engine reduces to an errno.
	firstCause
}

var _ engine.IOEnd = (*imageReader)(nil)

func (x *imageReader) Name() string                              { return x.name }
func (x *imageReader) Data(off, end int64) (int64, int64, error) { return x.im.Data(off, end) }
func (x *imageReader) Settle() error                             { return nil }
func (x *imageReader) Reserve(int64, int64, bool) error          { return unix.EBADF }
func (x *imageReader) Truncate(int64) error                      { return unix.EBADF }
func (x *imageReader) PrepareTail() error                        { return nil }
func (x *imageReader) WriteAt([]byte, int64) (int, error)        { return 0, unix.EBADF }
func (x *imageReader) Zero(int64, int64, bool) error             { return unix.EBADF }
func (x *imageReader) Flush() error                              { return nil }

// ReadAt reads the guest's bytes, keeping the image's first error.
func (x *imageReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := x.im.ReadAt(p, off)
	x.keep(err)
	return n, err
}

func (x *imageReader) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "qcow2", Detail: x.name + ": " + strings.TrimSpace(x.about)}
}
