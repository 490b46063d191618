//go:build !linux

package blocksync

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// On other systems the ends on this host are refused: the checks that
// make writing DST safe (mounts, holders, locks) are Linux's. Sync and
// Compare work on any Source and Target.

var errNotLinux = errors.New("blocksync: ends on this host need Linux, not " + runtime.GOOS)

func errnoName(e syscall.Errno) string { return "" }

// File is an end on this host (Linux only).
type File struct{}

// TargetOptions shape OpenTarget (Linux only).
type TargetOptions struct {
	Create bool
	Force  bool
	Src    *File
}

// OpenSource is refused on this system.
func OpenSource(path string) (*File, error) {
	return nil, refuse(KindNotSupported, path, errNotLinux.Error(), errNotLinux)
}

// OpenTarget is refused on this system.
func OpenTarget(path string, opt TargetOptions) (*File, error) {
	return nil, refuse(KindNotSupported, path, errNotLinux.Error(), errNotLinux)
}

func (e *File) Name() string                             { return "" }
func (e *File) Size() int64                              { return 0 }
func (e *File) Descriptor() *os.File                     { return nil }
func (e *File) Block() bool                              { return false }
func (e *File) Resizable() bool                          { return false }
func (e *File) Identity() Identity                       { return Identity{} }
func (e *File) SharesBytes(peer Identity) string         { return "" }
func (e *File) ReadAt(p []byte, off int64) (int, error)  { return 0, errNotLinux }
func (e *File) WriteAt(p []byte, off int64) (int, error) { return 0, errNotLinux }
func (e *File) Zero(off, n int64) error                  { return errNotLinux }
func (e *File) Truncate(size int64) error                { return errNotLinux }
func (e *File) Sync() error                              { return errNotLinux }
func (e *File) Close() error                             { return nil }
func (e *File) Created() bool                            { return false }
func (e *File) Commit() error                            { return errNotLinux }
func (e *File) RefuseImage(end string) error             { return nil }

// Direct is a File written through itself here (no O_DIRECT).
type Direct struct {
	*File
	DirectBytes, BufferedBytes int64
	DirectReadBytes            int64
}

// NewDirect wraps f.
func NewDirect(f *File) *Direct { return &Direct{File: f} }

// Direct is false here.
func (d *Direct) Direct() bool { return false }

// Release does nothing here.
func (d *Direct) Release() {}
