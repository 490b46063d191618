// Package nbdend makes an NBD export one end of an engine copy, a peer of
// files and block devices: SRC, DST, or both.
//
// # Contract
//
// An Export wraps an open *nbd.Client as an engine.Endpoint: Data maps the
// export with NBD_CMD_BLOCK_STATUS (base:allocation), as SEEK_DATA and
// SEEK_HOLE map a file, keeping the last answer so that a fragmented
// export costs one round trip per window (1 GiB), not one per extent;
// only extents the server says read as zeros (NBD_STATE_ZERO) are holes,
// an unallocated extent without it is data; a server that answers block
// status with an error is asked no more, and everything is read (a dead
// connection fails the copy instead). An export has a fixed size and
// no preallocation: Truncate and Reserve fail with EOPNOTSUPP (the engine
// then allocates as it writes), and a job with an NBD DST must not ask for
// FinalSize or CutBackOnStop. Settle and PrepareTail have nothing to do:
// the server's answers already cover every write it completed, and the
// client writes a partial last block by reading it, patching it and
// writing it back.
//
// An Export is an engine.IOEnd: the pool backend (package fallback), which
// serves any mix of descriptors and IOEnds, moves its requests through
// the client (OpRead and OpWrite to ReadAt and WriteAt; OpSync to FLUSH,
// which alone makes an NBD DST count as synced; OpFallocate to
// WRITE_ZEROES), on its worker goroutines, one per slot. The client
// spreads the requests over its connections (several when the server
// advertises CAN_MULTI_CONN). The backend name "nbd" stays registered as
// the pool, for callers that ask for it by name.
//
// Errors name NBD commands (OpName: "write zeroes", "flush"), with the
// export's URI, the offset and the errno the server or the client gave.
//
// Zeroing: fallocate PUNCH_HOLE becomes WRITE_ZEROES that may leave a
// hole, ZERO_RANGE WRITE_ZEROES with NO_HOLE (Export.Zero says how).
//
// Sockets are driven by goroutines (the client's sender and reader per
// connection), not io_uring: the client is built on net.Conn, and the
// copy's cost is the bytes on the socket, which Go's poller moves
// without a copy beyond the kernel's.
package nbdend
