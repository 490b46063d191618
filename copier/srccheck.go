package copier

// The check that SRC did not change while it was read is Linux's
// (srcchanged_linux.go); its arguments are here because held, which
// every platform builds, names them.

// srcCheck is how SRC is checked.
type srcCheck struct {
	// own, when not nil, are writes of the copy's own that reach SRC:
	// what they change is not compared, and the check says what was not
	// checked.
	own *selfWrites
	// stopped: the copy stopped or failed before its end, and only
	// decides what DST holds. A loop device SRC is not fsync'ed then: a
	// stop must not wait on others' writeback, nor flush the data the
	// backing file's other writers left in its page cache; a write still
	// there is seen by its device node's mtime (nodeMtime).
	stopped bool
}

// selfWrites is how the copy's own writes (or a batch neighbour's)
// reach what SRC's check compares; nil: they do not.
type selfWrites struct {
	why string // "SRC and DST share /a.img, in other bytes"
	// through are the block devices the writes pass through
	// (guard.Through), whose counts they move; none (writes to a
	// file, or to an end not known to be one): any may.
	through []uint64
}
