// Package eintr retries system calls that a signal interrupted. Go
// preempts goroutines with SIGURG, and on FUSE and network filesystems a
// blocking call can return EINTR before anything happened: the same call
// again is exact.
package eintr

import "syscall"

// Retry calls f until it returns something other than EINTR.
func Retry[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err != syscall.EINTR {
			return v, err
		}
	}
}

// RetryErr is Retry for a call that returns only an error.
func RetryErr(f func() error) error {
	_, err := Retry(func() (struct{}, error) { return struct{}{}, f() })
	return err
}
