//go:build !linux

package faultfs

import "testing"

// Mount skips the test: the fault file system is built on Linux FUSE
// behaviour (direct I/O, fusectl, umount2).
func Mount(t testing.TB, backingDir string, faults ...Fault) *FS {
	t.Helper()
	t.Skipf("faultfs: FUSE fault injection is implemented for Linux only")
	return nil
}

// MountWith skips the test, like Mount.
func MountWith(t testing.TB, backingDir string, opts Options) *FS {
	t.Helper()
	t.Skipf("faultfs: FUSE fault injection is implemented for Linux only")
	return nil
}

// Unmount has nothing to do where Mount always skips.
func (fs *FS) Unmount() error { return nil }
