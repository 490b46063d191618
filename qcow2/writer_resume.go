package qcow2

import (
	"errors"
	"fmt"
)

// ErrNotResumable says a file is not an image a checkpointing Writer with
// these options left, or not one it can go on from: its header, its
// tables or its entries are not what such a Writer writes.
var ErrNotResumable = errors.New("not an image ringcp can resume")

// Resume goes on writing an image that a Writer with opt.Checkpoints left
// on t (stopped, killed, or crashed): the image on disk is its last
// checkpoint. from is the guest offset up to which that checkpoint is
// known to hold every byte written (the part a resume state records),
// a multiple of the cluster size: the clusters below it are kept as the
// image names them, every other cluster is dropped and is written
// again, at or after from, by the caller. The image on disk stays as it
// is until the first Checkpoint: the clusters it names that the resumed
// image does not need (its metadata, the dropped clusters) are punched
// and handed out again only once the new checkpoint is live; only those
// it does not name (written after it) are punched at once.
//
// Only what Writer writes is accepted: version 3, 16-bit refcounts, no
// snapshots, no extended L2 entries, the cluster size, virtual size,
// compression type and backing file of opt; data clusters aligned, in
// the file, named once and not over the metadata; compressed clusters in
// the file, not over data or metadata. Anything else is ErrNotResumable.
func Resume(t WriteTransport, opt WriterOptions, from int64) (*Writer, error) {
	w, err := newWriter(t, opt)
	if err != nil {
		return nil, err
	}
	w.opt.Checkpoints = true
	if from < 0 || from%w.cs != 0 || from > w.size {
		return nil, fmt.Errorf("qcow2: resume from %d: not a cluster boundary inside the size %d", from, w.size)
	}
	im, err := readImage(t, Options{})
	if err != nil {
		return nil, notResumable(t.Name(), err.Error())
	}
	if why := w.sameHeader(im); why != "" {
		return nil, notResumable(t.Name(), why)
	}
	// Bounds the memory the refcounts take: a file far larger than the
	// image's data, its metadata and a few checkpoints is not one a copy
	// of this size left.
	if limit := 8*w.size + 16<<30; im.fileSize > limit {
		return nil, notResumable(t.Name(), fmt.Sprintf("the file holds %d bytes, more than a copy of %d bytes leaves", im.fileSize, w.size))
	}
	r := &resumed{w: w, im: im, clusters: ceilDiv(im.fileSize, w.cs)}
	if err := r.load(from / w.cs); err != nil {
		return nil, err
	}
	// Past the last cluster the image on disk names, the file holds
	// nothing the image needs (what the stopped run wrote after its
	// last checkpoint, or anything appended since): it is cut there, so
	// that neither memory nor the finished image carries it.
	w.next = int64(len(r.used)) * w.cs
	if w.next < im.fileSize {
		if err := t.Truncate(w.next); err != nil {
			return nil, &IOError{Op: "truncate", Name: w.name, Off: w.next, Err: err}
		}
	}
	var unnamed []freeRun
	w.live, unnamed = r.unused(w.next)
	// What nothing on disk names (clusters written after the last
	// checkpoint, by the run that was stopped) is handed out again at
	// once: else every run stopped before its first checkpoint would
	// grow the file by what it wrote.
	w.release(unnamed)
	w.started = true
	return w, nil
}

func notResumable(name, why string) error {
	return fmt.Errorf("qcow2: %s: %w: %s", name, ErrNotResumable, why)
}

// sameHeader says how the image's header differs from the one w writes,
// or "". Past the fields a checkpoint changes (the tables' places and
// sizes, bytes 36 to 60) the first cluster must be the very bytes w
// writes there: a later header is written over its first sector only.
func (w *Writer) sameHeader(im *Image) string {
	h := im.h
	l1 := make([]uint64, ceilDiv(ceilDiv(w.size, w.cs), w.l2n))
	want := w.header(&layout{l1: l1, l1Off: int64(h.L1TableOffset), tableOff: int64(h.RefTableOffset), tableCl: int64(h.RefTableClusters)})
	have := make([]byte, w.cs)
	if im.fileSize < w.cs || readFull(im.t, have, 0) != nil {
		return "its first cluster cannot be read"
	}
	switch {
	case h.ClusterBits != uint32(w.cbits):
		return fmt.Sprintf("cluster size %d, this copy's is %d", h.clusterSize(), w.cs)
	case h.Size != uint64(w.size):
		return fmt.Sprintf("virtual size %d, this copy's is %d", h.Size, w.size)
	case h.BackingFile != w.opt.BackingFile || h.BackingFormat != w.opt.BackingFormat:
		return fmt.Sprintf("backing file %q (%s), this copy's is %q (%s)", h.BackingFile, h.BackingFormat, w.opt.BackingFile, w.opt.BackingFormat)
	case h.L1Size != uint32(len(l1)):
		return fmt.Sprintf("L1 table of %d entries, this copy writes %d", h.L1Size, len(l1))
	case string(have) != string(want):
		return "its header holds other fields or extensions than ringcp writes (version, features, compression type, refcount order)"
	}
	return ""
}

// Kinds of host clusters a resumed image keeps.
const (
	usedMeta uint8 = iota + 1
	usedData
	usedCompressed
	usedDropped // named by an entry past the resume point
)

// resumed is the image being taken up again.
type resumed struct {
	w  *Writer
	im *Image
	// used are the host clusters of the file the image names, by kind,
	// up to the last it names (claim grows it).
	used     []uint8
	clusters int64 // the file's
}

// claim grows used to hold host cluster c, which is in the file, and
// gives its kind's place.
func (r *resumed) claim(c int64) *uint8 {
	if n := c + 1 - int64(len(r.used)); n > 0 {
		r.used = append(r.used, make([]uint8, n)...)
	}
	return &r.used[c]
}

// load reads the image's L2 tables and keeps the entries of the guest
// clusters below keep.
func (r *resumed) load(keep int64) error {
	meta, err := r.im.metadata()
	if err != nil {
		return notResumable(r.w.name, err.Error())
	}
	if err := overlaps(r.w.name, meta); err != nil {
		return notResumable(r.w.name, err.Error())
	}
	for _, m := range meta {
		for c := m.off / r.w.cs; c < min(ceilDiv(m.end, r.w.cs), r.clusters); c++ {
			*r.claim(c) = usedMeta
		}
	}
	b := make([]byte, r.w.cs)
	for i, e := range r.im.l1 {
		off := int64(e & entryOffsetMask)
		if off == 0 {
			continue
		}
		if err := readFull(r.im.t, b, off); err != nil {
			return &IOError{Op: "read L2 table", Name: r.w.name, Off: off, Err: err}
		}
		if err := r.keepTable(int64(i), decodeTable(b), keep); err != nil {
			return err
		}
	}
	return nil
}

// named marks the clusters a dropped entry names, where nothing kept
// lies: the image on disk still names them until a checkpoint replaces
// it. An entry that is not one Writer writes names nothing here.
func (r *resumed) named(e uint64) {
	mark := func(c int64) {
		if c >= 0 && c < r.clusters {
			if k := r.claim(c); *k == 0 {
				*k = usedDropped
			}
		}
	}
	switch {
	case e&entryCompressed != 0:
		off, n := r.im.compressedSpan(e)
		for c := off / r.w.cs; c <= (off+n-1)/r.w.cs && n > 0; c++ {
			mark(c)
		}
	case e&entryOffsetMask != 0:
		mark(int64(e&entryOffsetMask) / r.w.cs)
	}
}

// keepTable keeps the entries of L2 table i below guest cluster keep.
func (r *resumed) keepTable(i int64, t []uint64, keep int64) error {
	w := r.w
	for k, e := range t {
		ci := i*w.l2n + int64(k)
		if e == 0 {
			continue
		}
		if ci >= keep {
			r.named(e)
			continue
		}
		if err := r.keepEntry(ci, e); err != nil {
			return notResumable(w.name, err.Error())
		}
		w.setEntryLocked(ci, e)
	}
	return nil
}

// keepEntry checks an entry as Writer writes them, and claims its host
// clusters.
func (r *resumed) keepEntry(ci int64, e uint64) error {
	w := r.w
	switch {
	case e == entryZero:
		return nil
	case e&entryCompressed != 0:
		off, n := r.im.compressedSpan(e)
		if off < w.cs || off+n > r.im.fileSize {
			return fmt.Errorf("compressed guest cluster %d at [%#x, +%d) outside the file's data", ci, off, n)
		}
		for c := off / w.cs; c <= (off+n-1)/w.cs; c++ {
			k := r.claim(c)
			if *k != 0 && *k != usedCompressed {
				return fmt.Errorf("compressed guest cluster %d at %#x over other data or metadata", ci, off)
			}
			*k = usedCompressed
		}
		return nil
	case e&^(entryOffsetMask|entryCopied) != 0 || e&entryCopied == 0:
		return fmt.Errorf("guest cluster %d: L2 entry %#x is not one ringcp writes", ci, e)
	}
	host := int64(e & entryOffsetMask)
	c := host / w.cs
	if host%w.cs != 0 || host < w.cs || host >= r.im.fileSize {
		return fmt.Errorf("guest cluster %d at host %#x: not a cluster of the file's data", ci, host)
	}
	k := r.claim(c)
	if *k != 0 {
		return fmt.Errorf("guest cluster %d at host %#x: the cluster is named twice, or holds metadata", ci, host)
	}
	*k = usedData
	return nil
}

// unused are the runs of clusters from the first after the header to
// end that the kept entries do not name: those the image on disk names
// (its metadata, dropped entries), freed once a checkpoint replaces it;
// and the rest, which nothing names, free at once.
func (r *resumed) unused(end int64) (named, unnamed []freeRun) {
	cs := r.w.cs
	add := func(runs []freeRun, c int64) []freeRun {
		if n := len(runs); n > 0 && runs[n-1].end == c*cs {
			runs[n-1].end += cs
			return runs
		}
		return append(runs, freeRun{c * cs, (c + 1) * cs})
	}
	for c := int64(1); c < end/cs; c++ {
		k := uint8(0)
		if c < int64(len(r.used)) {
			k = r.used[c]
		}
		switch k {
		case usedMeta, usedDropped:
			named = add(named, c)
		case 0:
			unnamed = add(unnamed, c)
		}
	}
	return named, unnamed
}
