package nbd

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrProtocol is wrapped by every error that says the server broke the
// NBD protocol (bad magic, unknown cookie, a chunk outside its request, a
// truncated reply...). After it the connection is dead: every request in
// flight fails with it, and so does every later Submit.
var ErrProtocol = errors.New("server broke the NBD protocol")

// ErrTimeout is wrapped when the server made no progress within
// Options.Timeout while requests were in flight (or the handshake did not
// finish within Options.HandshakeTimeout). The connection is dead after it.
var ErrTimeout = errors.New("timed out waiting for the NBD server")

// ErrDisconnected is wrapped when the server closed the connection
// between replies while requests were in flight.
var ErrDisconnected = errors.New("the NBD server closed the connection")

// ErrNoExport is wrapped when the server has no export of the name asked
// for (NBD_REP_ERR_UNKNOWN); its errno is ENOENT.
var ErrNoExport = errors.New("no such export")

// ErrResolve is wrapped when the URI's host name does not resolve (no
// such host, or no answer from the resolver): the connect never reached a
// server, and its Errno is 0, not an EIO that reads as a failing disk.
// The *net.DNSError is wrapped too.
var ErrResolve = errors.New("cannot resolve the host name")

// ErrClosed is returned by Submit after Close, or after the connection died.
var ErrClosed = errors.New("NBD connection closed")

// ErrNotSupported is wrapped by the errors of URIs that name what this
// client does not do (vsock, TLS with pre-shared keys or anonymous TLS).
var ErrNotSupported = errors.New("not supported")

// protoErrorf builds an error wrapping ErrProtocol.
func protoErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// Error is a failed NBD request or connection: the op ("read", "write",
// "write zeroes", "trim", "flush", "block status", "connect",
// "handshake"), the export's URI, the byte range, the errno and what the
// server or the client said. errors.Is(err, syscall.ENOSPC) works, and so
// does errors.Is(err, ErrProtocol) when the server broke the protocol.
type Error struct {
	Op     string
	URI    string
	Offset int64
	Length int64
	Errno  syscall.Errno // 0 only for errors of dial or handshake without an errno
	Msg    string        // the server's message, if it sent one
	Err    error         // the cause when the client saw it (protocol, timeout, socket)
}

func (e *Error) Error() string {
	s := fmt.Sprintf("nbd %s %s", e.Op, e.URI)
	if e.Length > 0 || e.Offset > 0 {
		s += fmt.Sprintf(" at offset %d length %d", e.Offset, e.Length)
	}
	if e.Errno != 0 {
		s += fmt.Sprintf(": %v (%s)", e.Errno, errnoName(e.Errno))
	}
	if e.Msg != "" {
		s += ": server says: " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap gives the errno and the cause, so errors.Is sees both.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Errno != 0 {
		errs = append(errs, e.Errno)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// errnoName gives the symbolic name admins search for, like EIO.
func errnoName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// errnoFromWire maps an NBD error value to a Linux errno. The spec fixes
// the values to the common Linux ones; anything else is to be treated as
// NBD_EINVAL ("The client SHOULD treat an unexpected error value as if it
// had been NBD_EINVAL").
func errnoFromWire(v uint32) syscall.Errno {
	switch v {
	case 1:
		return syscall.EPERM
	case 5:
		return syscall.EIO
	case 12:
		return syscall.ENOMEM
	case 22:
		return syscall.EINVAL
	case 28:
		return syscall.ENOSPC
	case 75:
		return syscall.EOVERFLOW
	case 95:
		return syscall.EOPNOTSUPP // NBD_ENOTSUP; ENOTSUP == EOPNOTSUPP on Linux
	case 108:
		return syscall.ESHUTDOWN
	}
	return syscall.EINVAL
}

// errnoOf picks the errno a dead connection reports: EPROTO for a broken
// protocol, ETIMEDOUT for a timeout, the socket's own errno when there is
// one, 0 for a host name that does not resolve, else EIO.
func errnoOf(err error) syscall.Errno {
	var (
		errno syscall.Errno
		dns   *net.DNSError
	)
	switch {
	case errors.As(err, &dns):
		return 0 // no errno: the resolver's answer says what it is
	case errors.Is(err, ErrProtocol):
		return syscall.EPROTO
	case errors.Is(err, ErrTimeout):
		return syscall.ETIMEDOUT
	case errors.Is(err, ErrDisconnected):
		return syscall.ECONNRESET
	case errors.Is(err, ErrNoExport), errors.Is(err, ErrNoBitmap):
		return syscall.ENOENT
	case errors.Is(err, ErrClosed):
		return syscall.EBADF // like I/O on a closed descriptor
	case errors.As(err, &errno):
		return errno
	}
	return syscall.EIO
}
