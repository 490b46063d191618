package copier

import (
	"os"

	"golang.org/x/sys/unix"
)

// DstState says what a copy left in DST, so that a caller can tell the
// user exactly what is there after a failure or an interruption.
type DstState int

// What DST holds after Run.
const (
	// DstUntouched: DST was not opened for writing; it is as it was.
	DstUntouched DstState = iota
	// DstComplete: the copy is complete (and synced unless NoSync).
	DstComplete
	// DstDiscarded: DST was new and the copy did not complete, so it was
	// never given its name (or, where O_TMPFILE is missing, was removed):
	// nothing is left.
	DstDiscarded
	// DstPrefix: DST is a regular file cut to DstOffset+Contiguous bytes;
	// it holds exactly the first Report.Contiguous bytes of the copy.
	DstPrefix
	// DstPartial: DST (a block device, or a file written in a range) holds
	// the first Report.Contiguous bytes of the copy at DstOffset; the rest
	// of the range holds old data, new data, or a mix.
	DstPartial
)

// String names the state for logs and JSON.
func (s DstState) String() string {
	switch s {
	case DstComplete:
		return "complete"
	case DstDiscarded:
		return "discarded"
	case DstPrefix:
		return "prefix"
	case DstPartial:
		return "partial"
	}
	return "untouched"
}

// stopped fills in what a failed or interrupted copy left in DST and
// returns err. A DST created by name is removed here.
func (p *Plan) stopped(rep *Report, d *dest, err error) error {
	rep.DstState = p.leftIn(d, rep.Contiguous)
	return err
}

func (p *Plan) leftIn(d *dest, contiguous int64) DstState {
	switch {
	case d.linked:
		return DstComplete // complete and named: only its folder's fsync failed
	case d.unnamed:
		return DstDiscarded // the inode vanishes when its descriptor closes
	case d.created:
		if d.remove(p.dst.path) {
			return DstDiscarded
		}
		return DstPartial
	case p.truncate:
		// The engine cut the file to its contiguous prefix; trust that only
		// if the size says so (the cut itself can fail).
		var st unix.Stat_t
		if unix.Fstat(int(d.f.Fd()), &st) == nil && st.Size == p.opts.DstOffset+contiguous {
			return DstPrefix
		}
	}
	return DstPartial
}

// remove unlinks a DST that this copy created by name, if the name still
// points at the file it created.
func (d *dest) remove(path string) bool {
	var mine, now unix.Stat_t
	if unix.Fstat(int(d.f.Fd()), &mine) != nil || unix.Lstat(path, &now) != nil {
		return false
	}
	if mine.Dev != now.Dev || mine.Ino != now.Ino {
		return false
	}
	return os.Remove(path) == nil
}
