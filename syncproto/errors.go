package syncproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
)

// ErrProtocol is wrapped by every error that says the peer broke the
// protocol: a bad frame, a checksum that fails, a message out of order
// or out of range. The session is over after it.
var ErrProtocol = errors.New("the sync peer broke the protocol")

func protoErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// MismatchError: the sync ran to its end, but DST's whole digest
// afterwards is not SRC's. DST was written and synced, and is not a copy
// of SRC. The ringcp command exits 3 on it.
type MismatchError struct {
	Src, Dst blocksync.Digest
	Msg      string // what the peer said, when it found it
}

func (e *MismatchError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return fmt.Sprintf("DST's content after the sync (digest %x) is not SRC's (%x)", e.Dst[:8], e.Src[:8])
}

// RemoteError is an error the peer reported, as the peer's own error
// type (a *blocksync.OpError naming op, path, offset and errno, a
// *blocksync.RefusedError with its Kind, a *MismatchError, a
// *copier.SrcChangedError, or an error wrapping ErrProtocol), which it
// unwraps to; Peer names where it happened.
type RemoteError struct {
	Peer string
	Err  error
}

func (e *RemoteError) Error() string { return e.Peer + ": " + e.Err.Error() }
func (e *RemoteError) Unwrap() error { return e.Err }

// lateRefusal turns a refusal that came once changes had been applied
// to DST (or sent to it) into a protocol error: a refusal says that
// nothing was written (ringcp exits 2 and does not warn that DST holds a
// mix), which is then untrue. Every refusal of a sync comes before its
// first change; a peer that sends one later is broken or hostile.
func lateRefusal(err error, st blocksync.Stats) error {
	var ref *blocksync.RefusedError
	if err == nil || st.Changed == 0 || !errors.As(err, &ref) {
		return err
	}
	return protoErrorf("a refusal after %d granules of DST were changed: %v", st.Changed, err)
}

// Kinds of error frame.
const (
	errOp       = 1 // an I/O: op, path, offset, errno
	errRefused  = 2 // a refusal before anything was written
	errProtocol = 3
	errMismatch = 4
	errOther    = 5
	// errSrcChanged: a *copier.SrcChangedError; its What in the
	// refusal kind's place, Path, and its Why as the message.
	errSrcChanged = 6
)

// encodeError turns an error into an error frame's payload.
func encodeError(err error) []byte {
	var (
		op                      *blocksync.OpError
		ref                     *blocksync.RefusedError
		mis                     *MismatchError
		rem                     *RemoteError
		changed                 *copier.SrcChangedError
		kind                    byte = errOther
		refK, opName, path, msg string
		off                     int64
	)
	errno := errnoOf(err)
	switch {
	case errors.As(err, &rem):
		return encodeError(rem.Err) // relayed as it came
	case errors.As(err, &ref):
		kind, refK, path, msg = errRefused, string(ref.Kind), ref.Path, ref.Reason
	case errors.As(err, &op):
		kind, opName, path, off = errOp, op.Op, op.Path, op.Offset
		if op.Err != error(errno) { // more than a bare errno: keep its words
			msg = op.Err.Error()
		}
	case errors.As(err, &mis):
		kind, msg = errMismatch, mis.Error()
	case errors.As(err, &changed):
		kind, refK, path, msg = errSrcChanged, changed.What, changed.Path, changed.Why
	case errors.Is(err, ErrProtocol):
		kind, msg = errProtocol, err.Error()
	default:
		msg = err.Error()
	}
	b := []byte{kind}
	b = binary.BigEndian.AppendUint32(b, uint32(errno))
	b = binary.BigEndian.AppendUint64(b, uint64(off))
	for _, s := range []string{refK, opName, path, msg} {
		b = appendString(b, clip(s, maxText), 2)
	}
	return b
}

// parseError turns an error frame back into the error it names.
func parseError(p []byte) (error, error) {
	d := decoder{p: p, what: "error"}
	kind := d.u8()
	errno := syscall.Errno(d.u32())
	off := int64(d.u64())
	refK, opName, path, msg := d.str(2, maxText), d.str(2, maxText), d.str(2, maxText), d.str(2, maxText)
	if err := d.done(); err != nil {
		return nil, err
	}
	var cause error = errno
	if msg != "" || errno == 0 {
		cause = errnoError{errno: errno, msg: msg}
	}
	switch kind {
	case errOp:
		return &blocksync.OpError{Op: opName, Path: path, Offset: off, Err: cause}, nil
	case errRefused:
		var e error
		if errno != 0 {
			e = errno
		}
		return &blocksync.RefusedError{Kind: blocksync.Kind(refK), Path: path, Reason: msg, Err: e}, nil
	case errProtocol:
		return fmt.Errorf("%w (the peer says: %s)", ErrProtocol, msg), nil
	case errMismatch:
		return &MismatchError{Msg: msg}, nil
	case errSrcChanged:
		return &copier.SrcChangedError{Path: path, What: refK, Why: msg}, nil
	case errOther:
		return cause, nil
	}
	return nil, protoErrorf("error frame of kind %d", kind)
}

// errnoError is a cause that came as text, with the errno it carried.
type errnoError struct {
	errno syscall.Errno
	msg   string
}

func (e errnoError) Error() string {
	if e.msg == "" {
		return e.errno.Error()
	}
	return e.msg
}

func (e errnoError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}

// errnoOf is the errno err carries, or 0.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
