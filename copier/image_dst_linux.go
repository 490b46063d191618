package copier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/qcow2"
	"golang.org/x/sys/unix"
)

// imageDst is a new qcow2 image made as DST (Options.DstFormat qcow2)
// over a new file of the file kind, which keeps its lifecycle: created
// unseen (O_TMPFILE, or a hidden temporary name), named only once
// complete and synced, removed when the copy fails. The engine writes the
// guest's bytes through an imageWriter (an engine.IOEnd the pool serves):
// qcow2.Writer hands out host clusters under a lock and compresses
// outside it, so many writers compress on all cores. SRC's holes and
// zero blocks are never written, and stay unallocated; over a backing
// file they become zero clusters where the backing file has data, and
// clusters equal to the backing file's are not stored. publish writes the
// tables and the header (Writer.Close, which syncs) before the name is
// given: an image never appears under DST's name without its header.
type imageDst struct {
	end
	ep    *endpoint
	under *endpoint
	wopt  qcow2.WriterOptions
}

var _ layered = (*imageDst)(nil)

func (d *imageDst) base() *endpoint { return d.under }

// newImageDst checks that DST can be a new image (a new file) and what
// its backing file is.
func newImageDst(p *Plan, base *endpoint) (*endpoint, error) {
	o := &p.opts
	resumed := p.resume != nil && p.resume.newDst && base.exists
	if base.exists && !resumed {
		// An image is written into as its guest's bytes; anything else
		// is refused there (image_update_linux.go).
		return newImageUpdate(p, base)
	}
	d := &imageDst{end: base.end, under: base}
	d.wopt = qcow2.WriterOptions{ClusterSize: o.Qcow2.ClusterSize, Compression: compressionOf(o.Qcow2.Compress)}
	if o.Qcow2.Preallocation == PreallocMetadata {
		d.wopt.Preallocation = qcow2.PreallocMetadata
	}
	d.wopt.ClusterSize = o.Qcow2.clusterSize()
	cs := d.wopt.ClusterSize
	ep := &endpoint{end: d, path: base.path, role: roleDst}
	d.ep = ep
	ep.geo = align.Geometry{Path: base.path, MemAlign: 1, OffsetAlign: 1, OptimalIO: int(max(cs, 1<<20))}
	// Zeros are found in whole clusters: a cluster of zeros is one the
	// image does not store. Over a backing file the image does not read
	// as zeros; compressed, a cluster SRC has in part waits in memory for
	// the rest: holes are said (Zero) in both cases, else every such
	// cluster would wait until the end, a cluster of memory each.
	ep.endFacts = endFacts{what: "new qcow2 image", ownIO: true, zeroUnit: int(cs), zeroUnitWhat: "the image's cluster size",
		notZeroed: o.Qcow2.Backing != "" || o.Qcow2.Compress != "", disk: base.disk, onDisk: base.onDisk}
	if o.Qcow2.Backing != "" {
		if err := d.checkBacking(p); err != nil {
			return base, err
		}
	}
	return ep, nil
}

// compressionOf is Qcow2Options.Compress as qcow2's.
func compressionOf(name string) qcow2.Compression {
	switch name {
	case "zlib":
		return qcow2.CompressZlib
	case "zstd":
		return qcow2.CompressZstd
	}
	return qcow2.CompressNone
}

// backingPath is where the backing file is from here: a relative name is
// relative to DST's folder, as QEMU reads it from the image.
func (d *imageDst) backingPath(p *Plan) string {
	name := p.opts.Qcow2.Backing
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(d.ep.path), name)
}

// checkBacking opens the backing file once, as it will be at Run, and
// settles its format.
func (d *imageDst) checkBacking(p *Plan) error {
	b, err := d.openBacking(p)
	if err != nil {
		return err
	}
	b.close()
	p.note("DST %s: over the backing file %s (%s): only what differs from it is stored", d.ep.path, p.opts.Qcow2.Backing, d.wopt.BackingFormat)
	return nil
}

// backing is the backing file open as its guest reads it.
type backing struct {
	r     qcow2.GuestReader
	close func()
	// path and st: the file as opened, for unchanged.
	path string
	fd   int
	st   unix.Stat_t
}

// unchanged fails when the backing file changed since it was opened:
// its name now another file (renamed over, replaced), or the file
// written (its size, mtime or ctime). The image stores only what
// differs from the bytes ringcp read there, and names the file by its
// name: QEMU would read it differently from SRC.
func (b backing) unchanged() error {
	if b.close == nil {
		return nil
	}
	var now, named unix.Stat_t
	if err := unix.Fstat(b.fd, &now); err != nil {
		return &os.PathError{Op: "fstat", Path: b.path, Err: err}
	}
	what := ""
	switch err := unix.Stat(b.path, &named); {
	case err != nil:
		what = fmt.Sprintf("its name no longer opens it (%v)", err)
	case named.Dev != b.st.Dev || named.Ino != b.st.Ino:
		what = fmt.Sprintf("its name is another file now (inode %d, was %d)", named.Ino, b.st.Ino)
	case now.Mode&unix.S_IFMT != unix.S_IFREG:
		// A device's node says nothing of writes to it.
	case now.Size != b.st.Size:
		what = fmt.Sprintf("its size is %d bytes, was %d", now.Size, b.st.Size)
	case now.Mtim != b.st.Mtim || now.Ctim != b.st.Ctim:
		what = "it was written (its mtime or ctime changed)"
	}
	if what == "" {
		return nil
	}
	return fmt.Errorf("%s: the backing file changed during the copy: %s; the new image stores only what differs from the backing file as it was read, and is discarded", b.path, what)
}

// openBacking opens the backing file (its own chain too) and fills in
// wopt's backing fields.
func (d *imageDst) openBacking(p *Plan) (backing, error) {
	q := &p.opts.Qcow2
	path := d.backingPath(p)
	// Opened as a chain's files are: a name QEMU reads through a
	// protocol, a FIFO, a character device or a /proc file is refused.
	t, _, err := qcow2.FileOpener(qcow2.Ref{Kind: qcow2.RefBacking, Name: q.Backing, From: d.ep.path})
	if err != nil {
		kind := KindBadInput
		if errors.Is(err, os.ErrNotExist) {
			kind = KindNotFound
		}
		return backing{}, refuseErr(kind, path, "cannot open the backing file", err).on("Qcow2.Backing")
	}
	file := t.(localFile)
	format := q.BackingFormat
	if format == "" {
		format = FormatRaw
		var head [4]byte
		if n, _ := file.ReadAt(head[:], 0); n == 4 && string(head[:]) == "QFI\xfb" {
			format = FormatQcow2
		}
	}
	d.wopt.BackingFile, d.wopt.BackingFormat = q.Backing, qcow2.Format(format)
	if format == FormatRaw {
		// Its end, not its stat: a block device's stat says 0 bytes, and
		// every cluster would then be compared with zeros.
		size, err := file.Seek(0, io.SeekEnd)
		if err != nil {
			file.Close()
			return backing{}, refuseErr(KindCheckFailed, path, "cannot tell the backing file's size", err).on("Qcow2.Backing")
		}
		d.wopt.Backing = io.NewSectionReader(file, 0, size)
		return withStat(backing{r: d.wopt.Backing, close: func() { file.Close() }}, file, path)
	}
	// A format taken from the magic is a guess: the backing file may be
	// a raw disk whose guest wrote a qcow2 header, and the new image would
	// tell QEMU it is qcow2.
	guessed := q.BackingFormat == ""
	im, err := openImage(file, qcow2.Options{Opener: qcow2.FileOpener, Guessed: guessed}, "Qcow2.Backing")
	if err != nil {
		file.Close()
		var refused *RefusedError
		if guessed && errors.As(err, &refused) && errors.Is(err, qcow2.ErrBackingRefused) {
			refused.Reason += "; Options.Qcow2.BackingFormat qcow2 says it is one"
		}
		return backing{}, err
	}
	d.wopt.Backing = im
	return withStat(backing{r: im, close: func() { im.Close(); file.Close() }}, file, path)
}

// withStat records what the backing file is as opened, for unchanged.
func withStat(b backing, file localFile, path string) (backing, error) {
	b.path, b.fd = path, int(file.Fd())
	if err := unix.Fstat(b.fd, &b.st); err != nil {
		b.close()
		return backing{}, refuseErr(KindCheckFailed, path, "cannot stat the backing file", err).on("Qcow2.Backing")
	}
	return b, nil
}

// localFile is a file qcow2.FileOpener opened.
type localFile interface {
	qcow2.Transport
	io.Seeker
	Close() error
	Fd() uintptr
}

// same, overlap: those of the new file beneath.
func (d *imageDst) same(o *endpoint) (bool, string) { return d.end.same(baseOf(o)) }
func (d *imageDst) overlap(_ byteRange, o *endpoint, _ byteRange) *overlap {
	return d.end.overlap(byteRange{0, -1}, baseOf(o), byteRange{0, -1})
}

// openDst creates the new file as the file kind does, and the image on
// it; the backing file is opened again, to compare with.
func (d *imageDst) openDst(p *Plan, rep *Report) (target, error) {
	t, err := d.end.openDst(p, rep)
	if err != nil {
		return nil, err
	}
	it := &imageTarget{target: t, path: d.ep.path}
	if p.opts.Qcow2.Backing != "" {
		if it.backing, err = d.openBacking(p); err != nil {
			t.discard()
			it.release()
			return nil, err
		}
	}
	opt := d.wopt
	opt.Size = p.opts.DstOffset + p.Length
	opt.Checkpoints = p.resume != nil
	file := t.held().f
	if file == nil {
		t.discard()
		it.release()
		return nil, refuse(KindNotSupported, d.ep.path, "a qcow2 DST is a new local file").on("DstFormat")
	}
	w, resumed, err := d.startImage(p, imageFile{file, d.ep.path}, opt)
	if err != nil {
		t.discard()
		it.release()
		return nil, err
	}
	it.x = &imageWriter{w: w, f: file, name: d.ep.path, about: describeNew(opt), checkpoints: opt.Checkpoints, resumed: resumed}
	it.h = held{io: it.x, align: 1, cause: it.cause}
	rep.note("DST %s: %s", d.ep.path, it.x.about)
	return it, nil
}

// describeNew is one line on the image a Writer makes.
func describeNew(o qcow2.WriterOptions) string {
	line := fmt.Sprintf("new qcow2 image (version 3), virtual size %d, cluster size %d", (o.Size+511)&^511, o.ClusterSize)
	if o.Compression != qcow2.CompressNone {
		line += ", " + o.Compression.String() + " compressed"
	}
	if o.BackingFile != "" {
		line += ", backing file " + o.BackingFile
	}
	return line
}

// imageFile is DST's new file under DST's name for errors (the file's own
// name is a temporary one).
type imageFile struct {
	*os.File
	name string
}

func (f imageFile) Name() string { return f.name }

// imageTarget is a qcow2 DST as Run holds it: the file kind's new file,
// and the image being written on it.
type imageTarget struct {
	target
	path    string
	x       *imageWriter
	h       held
	backing backing
}

func (t *imageTarget) held() *held                    { return &t.h }
func (t *imageTarget) shape(p *Plan, job *engine.Job) {} // the Writer sizes its file
func (t *imageTarget) cut(p *Plan) error              { return nil }

// cause is what the Writer met first, for the write the engine reports
// with an errno.
func (t *imageTarget) cause() error { return t.named(t.x.met()) }

// named is err, the Writer's, with a backing file that could not be
// read named (the Writer knows it as a reader only), and said to have
// changed when it did (cut short during the copy).
func (t *imageTarget) named(err error) error {
	var ioe *qcow2.IOError
	if !errors.As(err, &ioe) || ioe.Op != "read backing" || t.backing.close == nil {
		return err
	}
	if changed := t.backing.unchanged(); changed != nil {
		return changed
	}
	return &qcow2.IOError{Op: "read the backing file", Name: t.backing.path, Off: ioe.Off, Err: ioe.Err}
}

// explainDst adds to a copy's error the cause its DST gave (a qcow2
// DST's backing file that could not be read), when the engine's errno
// is all the error says about a request on DST.
func explainDst(a *acquired, err error) error {
	if err == nil || a.dst == nil {
		return err
	}
	h := a.dst.held()
	var op *engine.OpError
	if h.cause == nil || !errors.As(err, &op) || op.Path != h.name() {
		return err
	}
	if c := h.cause(); c != nil && !errors.Is(err, c) {
		return &srcError{err: err, cause: c}
	}
	return err
}

// publish finishes the image (tables, refcounts, the header, synced),
// then gives it its name.
func (t *imageTarget) publish(p *Plan, sync bool) error {
	if err := t.x.finish(); err != nil {
		return t.named(err)
	}
	if err := t.backing.unchanged(); err != nil {
		return err
	}
	return t.target.publish(p, sync)
}

// readBack finishes the image, so that it reads as an image, and reads
// it back from the storage through a reader of its own. A resumed image
// not yet written to is read as its last checkpoint left it, for the
// check of the part an earlier run copied (resumecheck_linux.go).
func (t *imageTarget) readBack(p *Plan) (string, error) {
	if !t.x.resumed || t.x.proven {
		if err := t.x.finish(); err != nil {
			return "", err
		}
	}
	fd := int(t.x.f.Fd())
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return "", &os.PathError{Op: "posix_fadvise(DONTNEED)", Path: t.path, Err: err}
	}
	im, err := openImage(imageFile{t.x.f, t.path}, qcow2.Options{Opener: qcow2.FileOpener}, "Dst")
	if err != nil {
		return "", err
	}
	t.x.read = im
	return "the finished image read back by ringcp's qcow2 reader, after its sync and posix_fadvise(DONTNEED)", nil
}

func (t *imageTarget) release() {
	if t.x != nil && t.x.read != nil {
		t.x.read.Close()
	}
	if t.backing.close != nil {
		t.backing.close()
	}
	t.target.release()
}

// imageWriter is a new qcow2 image as the engine writes it; once
// finished for a read back, as it reads it.
type imageWriter struct {
	w     *qcow2.Writer
	f     *os.File
	name  string
	about string
	done  bool
	err   error
	read  *qcow2.Image // the finished image, read back (readBack)
	// checkpoints: a resumable copy's image, made whole at each barrier
	// (Flush); resumed: one an earlier run began, whose part already
	// copied is checked (read) before anything is written, until proven.
	checkpoints, resumed, proven bool
	// The Writer's first error (a backing file that could not be read),
	// which the engine reduces to an errno.
	firstCause
}

var _ engine.IOEnd = (*imageWriter)(nil)

// finish closes the Writer once: its tables, refcounts and header,
// synced.
func (x *imageWriter) finish() error {
	if !x.done {
		x.done, x.err = true, x.w.Close()
	}
	return x.err
}

func (x *imageWriter) Name() string { return x.name }

// Data: a finished image's map; before, nothing to tell.
func (x *imageWriter) Data(off, end int64) (int64, int64, error) {
	if x.read == nil {
		return 0, 0, engine.ErrCannotMap
	}
	return x.read.Data(off, end)
}
func (x *imageWriter) Settle() error                    { return nil }
func (x *imageWriter) Reserve(int64, int64, bool) error { return unix.EOPNOTSUPP }
func (x *imageWriter) Truncate(int64) error             { return unix.EOPNOTSUPP }
func (x *imageWriter) PrepareTail() error               { return nil }
func (x *imageWriter) WriteAt(p []byte, off int64) (int, error) {
	n, err := x.w.WriteAt(p, off)
	x.keep(err)
	return n, err
}

// Zero: what is not written reads as zeros (or is compared with the
// backing file): a hole is never stored.
func (x *imageWriter) Zero(off, n int64, _ bool) error {
	err := x.w.WriteZeroes(off, n)
	x.keep(err)
	return err
}

// Flush makes the data written durable; the image is complete only when
// finished, or, for a resumable copy, as of its last barrier: a
// checkpoint makes everything written before it part of the image on
// disk (qcow2.Writer.Checkpoint, which syncs).
func (x *imageWriter) Flush() error {
	if x.checkpoints {
		return x.w.Checkpoint()
	}
	if err := x.f.Sync(); err != nil {
		return &os.PathError{Op: "fsync", Path: x.name, Err: err}
	}
	return nil
}

func (x *imageWriter) ReadAt(p []byte, off int64) (int, error) {
	if x.read == nil {
		return 0, unix.EBADF
	}
	return x.read.ReadAt(p, off)
}

func (x *imageWriter) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "qcow2", Detail: x.name + ": " + x.about}
}
