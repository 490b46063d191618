//go:build !linux

package copier

import (
	"errors"
	"fmt"
	"runtime"
)

// UringAvailable says, before anything is written, whether io_uring can
// be used here: never outside Linux.
func UringAvailable() error {
	return fmt.Errorf("io_uring is Linux's, not %s's: %w", runtime.GOOS, errors.ErrUnsupported)
}
