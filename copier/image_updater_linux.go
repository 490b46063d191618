package copier

import (
	"os"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/qcow2"
	"golang.org/x/sys/unix"
)

// imageUpdater is an existing qcow2 image as the engine writes it
// (image_update_linux.go); once finished for a read back, as it reads
// it.
type imageUpdater struct {
	u     *qcow2.Updater
	f     *os.File
	name  string
	about string
	// pad: a whole copy of a SRC whose size is not a multiple of 512
	// leaves the last bytes of the virtual size [pad, size), which must
	// read as zeros as they would in a new image.
	pad  int64
	done bool
	err  error
	read *qcow2.Image // the finished image, read back (readBack)
}

var _ engine.IOEnd = (*imageUpdater)(nil)

// finish zeroes the padding and writes the metadata, once.
func (x *imageUpdater) finish() error {
	if x.done {
		return x.err
	}
	x.done = true
	if x.pad < x.u.Size() {
		if x.err = x.u.WriteZeroes(x.pad, x.u.Size()-x.pad); x.err != nil {
			x.u.Abandon()
			return x.err
		}
	}
	x.err = x.u.Close()
	return x.err
}

func (x *imageUpdater) Name() string { return x.name }

// Data: a finished image's map; before, nothing to tell.
func (x *imageUpdater) Data(off, end int64) (int64, int64, error) {
	if x.read == nil {
		return 0, 0, engine.ErrCannotMap
	}
	return x.read.Data(off, end)
}
func (x *imageUpdater) Settle() error                    { return nil }
func (x *imageUpdater) Reserve(int64, int64, bool) error { return unix.EOPNOTSUPP }
func (x *imageUpdater) Truncate(int64) error             { return unix.EOPNOTSUPP }
func (x *imageUpdater) PrepareTail() error               { return nil }

func (x *imageUpdater) WriteAt(p []byte, off int64) (int, error) { return x.u.WriteAt(p, off) }

// Zero makes the range zero clusters (in whole clusters; written zeros
// in part), whatever punch says: the image's host file is not the
// guest's disk.
func (x *imageUpdater) Zero(off, n int64, _ bool) error { return x.u.WriteZeroes(off, n) }

// Flush makes the data written durable; the image's tables are written
// when the copy completes.
func (x *imageUpdater) Flush() error { return x.u.Flush() }

func (x *imageUpdater) ReadAt(p []byte, off int64) (int, error) {
	if x.read == nil {
		return 0, unix.EBADF
	}
	return x.read.ReadAt(p, off)
}

func (x *imageUpdater) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "qcow2", Detail: x.name + ": " + x.about}
}
