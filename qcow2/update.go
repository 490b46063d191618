package qcow2

import (
	"fmt"
	"sync"
)

// Updater writes guest bytes into an existing image in place, as
// qemu-img convert -n does: the image keeps its format, its options and
// its backing file, and its guest reads what was written. A cluster the
// image stores as it is, and alone (the COPIED flag: refcount 1), is
// overwritten where it is; any other (unallocated, a zero cluster,
// compressed, shared) gets a new host cluster at the end of the file,
// and what it held before is released. Clusters written in part keep the
// rest of their old guest bytes.
//
// The metadata is written by Close only, in the order that makes a crash
// at any point leave at most leaked clusters (which qemu-img check -r
// leaks repairs), never a reference to a cluster that is counted free:
// refcount increases first, then the L2 and L1 tables, then the
// decreases. Data written into clusters that were overwritten in place
// is the guest's at once, as a write into a raw disk is.
//
// What it does not maintain is refused at OpenUpdater, with nothing
// written: internal snapshots (clusters shared with them), persistent
// bitmaps and other autoclear features, extended L2 entries, an external
// data file, refcount widths other than 16 bits, and (through Open)
// encrypted, dirty or damaged images.
type Updater struct {
	t     WriteTransport
	im    *Image // the image as it was: its old bytes, read where a write covers a cluster in part
	name  string
	cs    int64
	size  int64
	zeroF bool // version 3: zero clusters exist
	// backed: unallocated clusters read the backing file, so a cluster
	// of zeros must be a zero cluster (or written zeros), never left
	// unallocated.
	backed bool
	start  int64 // the first host byte past the file as it was, cluster-aligned

	locks [updateLocks]sync.Mutex // by guest cluster: a cluster's read-modify-write is one at a time

	mu    sync.Mutex
	next  int64              // the next free host byte
	l2    map[int64][]uint64 // L2 tables touched, by L1 index, as they will be written
	dirty map[int64]bool     // of those, the ones changed
	freed []int64            // host clusters that lose one reference (one entry per reference)
	// pending is the first guest byte of the lowest cluster whose table
	// entry changed: what was written there is the guest's only once
	// Close writes the tables (size when none).
	pending int64
	err     error
	closed  bool
}

// updateLocks stripes the per-cluster locks.
const updateLocks = 64

// OpenUpdater opens the image on t for writing its guest bytes in place.
// opts are Open's (the Opener reads the backing chain, for clusters
// written in part); the whole metadata is checked (opts.Lazy is
// ignored). Nothing is written before the first WriteAt or WriteZeroes.
func OpenUpdater(t WriteTransport, opts Options) (*Updater, error) {
	opts.Lazy = false
	im, err := Open(t, opts)
	if err != nil {
		return nil, err
	}
	if err := updatable(im); err != nil {
		im.Close()
		return nil, err
	}
	u := &Updater{t: t, im: im, name: im.name, cs: im.cs, size: im.size,
		zeroF: im.h.Version >= 3, backed: im.backing != nil || im.h.BackingFile != "",
		l2: map[int64][]uint64{}, dirty: map[int64]bool{}, pending: im.size}
	end, err := usedEnd(im)
	if err != nil {
		im.Close()
		return nil, err
	}
	u.start = ceilDiv(end, im.cs) * im.cs
	u.next = u.start
	return u, nil
}

// usedEnd is where the host clusters the image uses end: past the last
// cluster with a refcount, and past every cluster an L2 entry names (so
// that a new cluster never lands on one, even where the refcounts are
// wrong). New clusters go there, as QEMU puts them, not at the end of
// the file: on a block device (an LV) the file's end is the device's.
func usedEnd(im *Image) (int64, error) {
	h := im.h
	end := int64(h.RefTableOffset) + int64(h.RefTableClusters)*im.cs
	end = max(end, int64(h.L1TableOffset)+int64(h.L1Size)*8, im.cs)
	tb := make([]byte, int64(h.RefTableClusters)*im.cs)
	if err := readFull(im.t, tb, int64(h.RefTableOffset)); err != nil {
		return 0, err
	}
	table := decodeTable(tb)
	block := make([]byte, im.cs)
	for k := len(table) - 1; k >= 0; k-- {
		off := int64(table[k] &^ 0x1ff)
		if off == 0 {
			continue
		}
		end = max(end, off+im.cs)
		if err := im.checkTable("refcount block", int64(k), uint64(off)); err != nil {
			return 0, err
		}
		if err := readFull(im.t, block, off); err != nil {
			return 0, err
		}
		if last := lastCounted(block); last >= 0 {
			end = max(end, (int64(k)*(im.cs/2)+last+1)*im.cs)
			break
		}
	}
	for _, e := range im.l1 {
		if off := int64(e & entryOffsetMask); off != 0 {
			end = max(end, off+im.cs)
		}
	}
	err := im.runs(0, im.size, func(r run) (bool, error) {
		switch r.kind {
		case runData:
			end = max(end, r.host+r.n)
		case runCompressed:
			coff, cn := im.compressedSpan(r.desc)
			end = max(end, coff+cn)
		}
		return true, nil
	})
	return end, err
}

// updatable refuses what an Updater does not maintain.
func updatable(im *Image) error {
	h := im.h
	refuse := func(what string) error {
		return &Error{Name: im.name, Cause: ErrUnsupported, What: what + ": ringcp does not write into such an image",
			Hint: "write it with qemu-img convert -n, or let ringcp make a new image"}
	}
	switch {
	case h.NbSnapshots > 0:
		return refuse(fmt.Sprintf("%d internal snapshots share its clusters", h.NbSnapshots))
	case h.Autoclear != 0:
		return refuse("persistent dirty bitmaps (autoclear features)")
	case im.extended:
		return refuse("extended L2 entries (subclusters)")
	case im.extData:
		return refuse("an external data file")
	case h.RefcountOrder != 4:
		return refuse(fmt.Sprintf("refcount_bits %d", 1<<h.RefcountOrder))
	}
	// The refcount table must be able to grow to count every cluster
	// the copy may add (all of the guest's, their L2 tables and
	// refcount blocks): a table past QEMU's limit could not be written
	// at Close, after the data.
	clusters := ceilDiv(im.fileSize, im.cs) + 2*ceilDiv(im.size, im.cs) + int64(len(im.l1)) + 64
	blocks := ceilDiv(clusters, im.cs/2)
	if blocks*8 > maxRefTableBytes {
		return refuse(fmt.Sprintf("%d-byte clusters for a %d-byte disk (its refcount table could outgrow QEMU's limit)", im.cs, im.size))
	}
	return nil
}

// lastCounted is the index of the last nonzero 16-bit refcount of a
// block, or -1.
func lastCounted(block []byte) int64 {
	for j := int64(len(block)/2) - 1; j >= 0; j-- {
		if block[2*j] != 0 || block[2*j+1] != 0 {
			return j
		}
	}
	return -1
}

// Size is the image's virtual size.
func (u *Updater) Size() int64 { return u.size }

// Name is the Transport's name.
func (u *Updater) Name() string { return u.name }

// Image is the image as it was opened (its header, its chain).
func (u *Updater) Image() *Image { return u.im }

// WriteAt writes guest bytes at off.
func (u *Updater) WriteAt(p []byte, off int64) (int, error) {
	if err := u.usable(off, int64(len(p))); err != nil {
		return 0, err
	}
	end := off + int64(len(p))
	for pos := off; pos < end; {
		ci := pos / u.cs
		stop := min(ci*u.cs+u.clusterLen(ci), end)
		var err error
		if pos == ci*u.cs && stop-pos == u.clusterLen(ci) {
			stop, err = u.writeWhole(ci, p[pos-off:], pos)
		} else {
			err = u.writeCluster(ci, pos-ci*u.cs, p[pos-off:stop-off])
		}
		if err := u.fail(err); err != nil {
			return int(pos - off), err
		}
		pos = stop
	}
	return len(p), nil
}

// WriteZeroes makes the guest's bytes [off, off+n) read as zeros: whole
// clusters become zero clusters (keeping their host cluster when they
// had one of their own, as QEMU does without discard), or unallocated
// in a version 2 image without a backing file; parts of clusters are
// written.
func (u *Updater) WriteZeroes(off, n int64) error {
	if err := u.usable(off, n); err != nil {
		return err
	}
	for pos, end := off, off+n; pos < end; {
		ci := pos / u.cs
		stop := min(ci*u.cs+u.clusterLen(ci), end)
		var err error
		if pos == ci*u.cs && stop-pos == u.clusterLen(ci) {
			err = u.zeroCluster(ci)
		} else {
			err = u.writeCluster(ci, pos-ci*u.cs, zeroCluster[:stop-pos])
		}
		if err := u.fail(err); err != nil {
			return err
		}
		pos = stop
	}
	return nil
}

// Pending is the guest offset below which everything written reads as
// written without Close (clusters overwritten in place): from there on,
// a write went to a new cluster, or made or unmade a zero cluster, which
// the image's tables name only once Close writes them. Size when no
// write did. After Abandon, or a Close that failed, only the writes
// below Pending are the guest's.
func (u *Updater) Pending() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pending
}

// Flush makes the data written so far durable (the metadata is written
// by Close).
func (u *Updater) Flush() error {
	if err := u.t.Sync(); err != nil {
		return &IOError{Op: "fsync", Name: u.name, Err: err}
	}
	return nil
}

// usable refuses a call after Close or a failure, or past the size.
func (u *Updater) usable(off, n int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.err != nil:
		return u.err
	case u.closed:
		return fmt.Errorf("qcow2: %s: write after Close", u.name)
	case off < 0 || n < 0 || off+n > u.size:
		return fmt.Errorf("qcow2: %s: write of %d bytes at %d is outside the size %d", u.name, n, off, u.size)
	}
	return nil
}

// fail keeps the first error: an image that missed a write must not get
// its metadata from Close.
func (u *Updater) fail(err error) error {
	if err == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.err = err
	}
	return err
}

func (u *Updater) clusterLen(ci int64) int64 { return min(u.cs, u.size-ci*u.cs) }

// Updatable says whether an Updater can write into im: nil, or the
// refusal OpenUpdater would give (what it does not maintain).
func Updatable(im *Image) error { return updatable(im) }

// Abandon gives up the Updater without writing the metadata: the data
// written so far stays where it went (clusters overwritten in place are
// the guest's; new clusters are named by nothing, and the image reads as
// before there). It releases the image's chain; safe after Close.
func (u *Updater) Abandon() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.im.Close()
}
