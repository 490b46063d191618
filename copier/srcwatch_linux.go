package copier

import "os"

// WatchFile records the file or block device f, opened at path (size
// bytes: a block device's), as it is now, for a program that reads it
// outside a copy (ringcp sync --serve reading SRC for a pull), and
// returns the check that a copy makes of its SRC at its end
// (srcchanged_linux.go): nil while f is as it was, else a
// *SrcChangedError naming it and what changed. A block device that is
// no loop device keeps no marks: its check always passes.
func WatchFile(f *os.File, path string, size int64) (unchanged func() error, err error) {
	w, err := watchSrc(f, path, size, "SRC "+path)
	if err != nil {
		return nil, err
	}
	check := unchangedAll(w)
	return func() error {
		_, err := check(srcCheck{}) // a read alone: no own writes to leave out
		return err
	}, nil
}
