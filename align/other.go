//go:build !linux

package align

import (
	"errors"
	"os"
)

// Probe needs Linux statx, block ioctls and sysfs; elsewhere it fails
// with errors.ErrUnsupported.
func Probe(f *os.File) (Geometry, error) {
	return Geometry{}, &os.PathError{Op: "probe", Path: f.Name(), Err: errors.ErrUnsupported}
}

// AllocBuffers needs Linux mmap flags; elsewhere it fails with
// errors.ErrUnsupported.
func AllocBuffers(n, size int) (*Buffers, error) {
	return nil, errors.ErrUnsupported
}

// Free does nothing: AllocBuffers never succeeds here.
func (b *Buffers) Free() error { return nil }
