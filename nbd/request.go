package nbd

import (
	"sync"
	"syscall"
)

// Op is what a Request does.
type Op uint8

// Request ops.
const (
	OpRead        Op = iota + 1 // read len(Buf) bytes at Off into Buf
	OpWrite                     // write Buf at Off
	OpZero                      // NBD_CMD_WRITE_ZEROES: Len bytes at Off read back as zeroes
	OpTrim                      // NBD_CMD_TRIM: the server may discard Len bytes at Off
	OpFlush                     // NBD_CMD_FLUSH: every write already completed is durable
	opBlockStatus               // NBD_CMD_BLOCK_STATUS, for Extents only
)

func (op Op) String() string {
	switch op {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpZero:
		return "write zeroes"
	case OpTrim:
		return "trim"
	case OpFlush:
		return "flush"
	case opBlockStatus:
		return "block status"
	}
	return "op?"
}

// cmd is the wire command of op.
func (op Op) cmd() uint16 {
	return [...]uint16{OpRead: cmdRead, OpWrite: cmdWrite, OpZero: cmdWriteZeroes,
		OpTrim: cmdTrim, OpFlush: cmdFlush, opBlockStatus: cmdBlockStatus}[op]
}

// ReqFlags modify a Request.
type ReqFlags uint8

// Request flags. Each needs the server's matching transmission flag;
// Submit refuses one the server did not offer.
const (
	// FUA: the write, zero or trim is durable when it completes
	// (NBD_CMD_FLAG_FUA; needs Info.CanFUA).
	FUA ReqFlags = 1 << iota
	// NoHole: OpZero must leave the range allocated (NBD_CMD_FLAG_NO_HOLE).
	NoHole
	// FastZero: OpZero fails at once with EOPNOTSUPP unless the server
	// zeroes faster than it writes (NBD_CMD_FLAG_FAST_ZERO; needs
	// Info.CanFastZero).
	FastZero
)

// Request is one operation for Submit. Buf belongs to the caller but must
// not be touched until the request's Completion arrives: reads land in it
// straight from the socket, writes are sent from it.
type Request struct {
	Op    Op
	Off   int64
	Len   int64  // OpZero, OpTrim: bytes affected (OpRead/OpWrite use len(Buf))
	Buf   []byte // OpRead: filled; OpWrite: sent
	Flags ReqFlags
	Tag   uint64 // the caller's, returned in the Completion
}

// length is how many bytes the request covers.
func (r Request) length() int64 {
	switch r.Op {
	case OpRead, OpWrite:
		return int64(len(r.Buf))
	case OpFlush:
		return 0
	}
	return r.Len
}

// Completion reports one finished Request.
type Completion struct {
	Tag   uint64
	N     int64         // bytes read, written, zeroed or trimmed; 0 on error
	Errno syscall.Errno // 0 on success
	Err   error         // nil on success, else an *Error naming op, URI, range and errno

	status [numContexts][]statusExtent // block status, for Extents and DirtyExtents
}

// op is a Request in flight: Submit splits it into wire requests (pieces)
// on one or several connections, and it completes when the last piece
// does.
type op struct {
	req     Request
	mu      sync.Mutex
	left    int    // pieces not yet finished
	err     *Error // the first piece's failure
	status  [numContexts][]statusExtent
	private chan Completion // the synchronous helpers' own; nil: the queue
}
