// Package nbd is a client of the Network Block Device protocol, in pure Go
// (no cgo), for copying to and from NBD exports: qemu-nbd,
// qemu-storage-daemon, nbdkit, nbd-server.
//
// # Contract
//
// Dial takes an NBD URI (nbd://host[:port]/export or
// nbd+unix:///export?socket=PATH; see ParseURI), runs the fixed newstyle
// handshake, and returns a Client with the export's Info: size,
// transmission flags, and the block size constraints, which every request
// honours (offsets and lengths multiples of the minimum, reads and writes
// no longer than the maximum: Submit splits longer ones). The handshake
// asks for structured replies and the base:allocation metadata context,
// and uses NBD_OPT_GO, falling back to NBD_OPT_EXPORT_NAME only when the
// server lacks it.
//
// Submit starts a Request (read, write, write zeroes, trim, flush) and
// returns at once; Reap returns Completions, each with the caller's Tag,
// the bytes done and an error that names op, URI, range and errno and
// unwraps to the errno. Any number of requests may be in flight; replies
// come back in any order. The synchronous helpers ReadAt, WriteAt, Zero,
// Trim, Flush and Extents are built on the same path.
//
// Dirty bitmaps: with Options.DirtyBitmap the handshake also selects
// QEMU's qemu:dirty-bitmap:NAME metadata context (one
// NBD_OPT_SET_META_CONTEXT with both queries), and DirtyExtents maps a
// range through it: the blocks written since the bitmap was cleared, in
// whole granules of the bitmap. A server that does not offer the bitmap
// fails Dial with a *BitmapError (ErrNoBitmap, ENOENT) that names it and
// the bitmaps the server lists instead (NBD_OPT_LIST_META_CONTEXT).
//
// A server that breaks the protocol (bad magic, unknown cookie, a chunk
// outside its request or overlapping another, a read reply missing bytes,
// a truncated stream) or stops answering for Options.Timeout kills the
// connection: every request in flight completes with an error wrapping
// ErrProtocol, ErrTimeout or ErrDisconnected, never with wrong data, and
// Submit fails from then on. With several connections (CAN_MULTI_CONN)
// the death of one is the death of all.
//
// Durability: a write is durable only after a later Flush succeeded
// (or when it carried FUA). Close waits for the requests in flight and
// sends NBD_CMD_DISC.
//
// Not implemented: TLS (nbds:// is refused with a clear error), extended
// headers (NBD_OPT_EXTENDED_HEADERS: still an experimental extension in
// the spec, and neither qemu-nbd 7.2 nor nbdkit 1.32 here offer it, so it
// could not be tested against a real server; without it lengths are 32
// bits, which only costs splitting requests that Submit does anyway), the
// oldstyle handshake, NBD_CMD_CACHE and NBD_CMD_FLAG_DF (we reassemble
// fragmented reads instead).
package nbd
