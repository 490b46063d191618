package copier

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// refuseErr is a refusal caused by err, whose errno (or message) follows
// the reason: "cannot stat: input/output error (EIO)".
func refuseErr(kind Kind, path, reason string, err error) *RefusedError {
	return &RefusedError{Kind: kind, Path: path, Reason: reason + ": " + cause(err), Err: err}
}

// acquireKind sorts what stopped Run from acquiring what a copy needs:
// mostly something that ran out (descriptors, memory, the ring).
func acquireKind(err error) Kind {
	switch {
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.EROFS):
		return KindPermission
	case errors.Is(err, os.ErrNotExist):
		return KindChanged // Prepare found it: it went away since
	}
	return KindResources
}

// cause says what err is without repeating the path it names (the
// refusal names it already): a bare errno, with its symbolic name.
func cause(err error) string {
	switch e := err.(type) {
	case *os.PathError:
		err = e.Err
	case *os.SyscallError:
		err = e.Err
	}
	if errno, ok := err.(syscall.Errno); ok {
		if name := errnoName(errno); name != "" {
			return fmt.Sprintf("%v (%s)", errno, name)
		}
	}
	return strings.TrimSpace(err.Error())
}

// errnoName is the symbolic name admins search for: EIO, ENOSPC.
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }
