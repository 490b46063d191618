package copier

import "fmt"

// RefusedError is a copy refused before anything was written: bad input or
// an unsafe target. The ringcp command exits 2 on it.
type RefusedError struct {
	Path   string // the path at fault, or "" when the options are
	Reason string
	Err    error // the errno behind it, if any
}

func (e *RefusedError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(path, reason string) error {
	return &RefusedError{Path: path, Reason: reason}
}

func refuseErr(path, reason string, err error) error {
	return &RefusedError{Path: path, Reason: fmt.Sprintf("%s: %v", reason, err), Err: err}
}
