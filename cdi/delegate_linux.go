package cdi

import (
	"fmt"
	"syscall"
)

// RunDelegate replaces this process with p.Delegate, CDI's own importer,
// for an import ringcp does not serve (IsUnserved): same environment,
// and the one argument CDI's controller gives an importer, -v=N. It
// returns only when the delegate could not be started; a Delegate of ""
// is that error.
func RunDelegate(p Paths, environ []string) error {
	if p.Delegate == "" {
		return fmt.Errorf("no delegate importer")
	}
	argv := []string{p.Delegate, fmt.Sprintf("-v=%d", p.Verbosity)}
	if err := syscall.Exec(p.Delegate, argv, environ); err != nil {
		return fmt.Errorf("run the delegate importer %s: %w", p.Delegate, err)
	}
	return nil // not reached: the process is the delegate's now
}
