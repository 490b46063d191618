package copier

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// A loop device SRC whose backing file's marks cannot be compared
// (removed before the copy, as `losetup -f img; rm img` leaves it, or
// during it; a block device) is held to counts of sectors written and
// discarded (/sys/class/block/NAME/stat), taken when it was opened: its
// own, and those of every other loop device over the same backing, the
// only ways left to write a file that has no path (a program that holds
// it open aside: where the path named the file when SRC was opened, its
// size and mtime are read through a descriptor kept since, which sees
// that program's writes too; removed before the copy, nothing does). A
// write through a loop device counts only once
// written back: SRC's own is fsync'ed when opened and at the end of a
// complete copy (identityOf; a stopped one reads its node's mtime
// instead), the others' page caches are not ringcp's to flush, as with
// their marks.
//
// The copy's own writes (or a batch neighbour's) may reach SRC's
// backing file through another loop device over it (DST /dev/loop1 over
// the file /dev/loop0 shows, in other bytes): they change the file's
// marks, which are then not compared (SRC is said unchecked), but not
// the counts of a device they do not pass through: where the counts
// hold SRC, they stay checked. Through SRC's own device, nothing is.

// nodeMtime is the mtime of the device node f was opened through, -1
// where it cannot be read: a write(2) through the node stamps it at once
// (blkdev_write_iter's file_update_time), as does a shared mapping's
// first write fault (filemap_page_mkwrite), long before the data is
// written back and counted. Another node of the same device (one made
// with mknod elsewhere) has its own. Its ctime is not compared: udev
// sets a node's mode and owner again on events that write nothing.
func nodeMtime(f fder) int64 {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return -1
	}
	return st.Mtim.Nano()
}

// nodeChanged says, as a *SrcChangedError, that a block device SRC was
// written through its node since it was opened.
func (w *srcFile) nodeChanged() error {
	if w.was.Kind != kindBlock {
		return nil
	}
	if now := nodeMtime(w.f); now != w.node || now < 0 {
		return &SrcChangedError{Path: w.was.Path, What: w.what, Why: fmt.Sprintf("it was written through its device node (its mtime %s, was %s)", stamp(now), stamp(w.node))}
	}
	return nil
}

// sectors are a block device's counts of 512-byte sectors written and
// discarded since it appeared.
type sectors struct{ written, discarded int64 }

// devWrites is the block device rdev's count of sectors written and
// discarded (fields 7 and 14 of its sysfs stat); false where sysfs does
// not say. Not the requests: the flush of ringcp's own fsync counts as a
// write request of no sectors (before Linux 5.5).
func devWrites(rdev uint64) (sectors, bool) {
	d, err := sysblock.Lookup(rdev)
	if err != nil {
		return sectors{}, false
	}
	st, err := d.Stat()
	if err != nil {
		return sectors{}, false
	}
	return sectors{written: st.WriteSectors, discarded: st.DiscardSectors}, true
}

// loopCount is a loop device's counts, by its node for messages.
type loopCount struct {
	node string
	n    sectors
}

// loopWrites are the counts of the loop device SRC id and of every
// other loop device over its backing, by number; nil where SRC's own
// cannot be read.
func loopWrites(id identity) map[uint64]loopCount {
	own, ok := devWrites(id.Rdev)
	if !ok {
		return nil
	}
	m := map[uint64]loopCount{id.Rdev: {node: id.Path, n: own}}
	for _, l := range loopsOver(id.Loop) {
		if n, ok := devWrites(l.Rdev); ok && l.Rdev != id.Rdev {
			m[l.Rdev] = loopCount{node: l.Node(), n: n}
		}
	}
	return m
}

// loopsOver lists the bound loop devices whose backing is b's.
func loopsOver(b *loopBacking) []sysblock.Loop {
	var out []sysblock.Loop
	for _, l := range sysblock.BoundLoops() {
		if l.Backing == (sysblock.Backing{Dev: b.Dev, Ino: b.Ino, Rdev: b.Rdev}) {
			out = append(out, l)
		}
	}
	return out
}

// passes says the writes may move the counts of device rdev.
func (s *selfWrites) passes(rdev uint64) bool {
	return s != nil && (len(s.through) == 0 || slices.Contains(s.through, rdev))
}

// loopsChanged compares w's loop counts, those the copy's own writes
// do not move, with what they were when SRC was opened: "" when none
// moved, else how.
func (w *srcFile) loopsChanged(own *selfWrites) string {
	now := map[uint64]sysblock.Loop{}
	for _, l := range loopsOver(w.was.Loop) {
		now[l.Rdev] = l
	}
	// SRC's own device first, then by number: one message, the same
	// for the same change.
	order := []uint64{w.was.Rdev}
	for _, rdev := range slices.Sorted(maps.Keys(w.loops)) {
		if rdev != w.was.Rdev {
			order = append(order, rdev)
		}
	}
	for _, rdev := range order {
		was := w.loops[rdev]
		if own.passes(rdev) {
			continue
		}
		_, bound := now[rdev]
		n, ok := devWrites(rdev)
		switch {
		case rdev != w.was.Rdev && !bound:
			return fmt.Sprintf("%s, a loop device over its backing file, was detached or rebound while it was read: what it wrote cannot be told", was.node)
		case !ok:
			return fmt.Sprintf("the counts of sectors written to %s cannot be read now", was.node)
		case n != was.n && rdev == w.was.Rdev:
			return "it was written through the device (its counts of sectors written moved; its backing file's marks cannot be compared)"
		case n != was.n:
			return fmt.Sprintf("it was written through %s, another loop device over its backing file (its counts of sectors written moved; the file's marks cannot be compared)", was.node)
		}
	}
	for rdev, l := range now {
		if _, seen := w.loops[rdev]; seen || own.passes(rdev) {
			continue
		}
		// Attached since SRC was opened: all it wrote is new.
		if n, ok := devWrites(rdev); !ok || n != (sectors{}) {
			return fmt.Sprintf("it was written through %s, a loop device over its backing file attached while it was read", l.Node())
		}
	}
	return ""
}
