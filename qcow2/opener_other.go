//go:build !linux

package qcow2

import "os"

// openLocal opens a file an image names, read-only.
func openLocal(name string) (*os.File, error) { return os.Open(name) }
