// Package syncproto is `ringcp sync` across hosts: SRC on one host, DST
// on another, and only the granules that differ crossing the network,
// never DST's content. ringcp runs on the other host as `ringcp sync
// --serve`, started over the system's ssh client (Dial: the user's ssh
// configuration, keys and agent, BatchMode), and the two speak a framed
// protocol over the ssh session's stdin and stdout. Both directions work:
// Push (local SRC to a remote DST) and Pull (a remote SRC to a local DST).
//
// # The protocol (Version 1)
//
// Every message is a frame: type, length, payload, CRC-32C (frame.go).
// Each type has a bound on its payload, checked from the header before
// anything is read into the one buffer a connection owns; nothing is
// allocated from a length on the wire.
//
//	client -> server  hello     version, role, path, granule, session key,
//	                            the client's speed of each digest, flags
//	                            (bits 1 create, 2 force, 4 raw SRC, 8 raw
//	                            DST, 16 verify: the target re-reads DST)
//	server -> client  welcome   version, the digest chosen (the fastest on
//	                            the slower host), its end's size and
//	                            identity, its host name
//	source -> target  start     SRC's size
//	target -> source  digests   DST's granule digests, in order, pipelined
//	source -> target  data      SRC's bytes of granules that differ
//	source -> target  zero      granules that differ and are zeros in SRC
//	source -> target  ack       every change before granule N was sent
//	source -> target  end       SRC's whole digest, once SRC was
//	                            found unchanged since it was opened
//	target -> source  done      DST's whole digest, after fsync
//	either            error     kind, op, path, offset, errno, message
//	                            (kind 6: SRC changed while it was read)
//
// The side holding DST (the target: the server in a push, the client in
// a pull) reads DST in large windows from several goroutines and streams
// a digest of every granule of [0, SRC's size); the side holding SRC (the
// source) reads SRC the same way, compares each granule's digest with the
// target's as they arrive, and sends the granules that differ. The target
// runs at most 65536 granules ahead of the source's acks. Digests are
// keyed by a random session key, BLAKE2b-256 or HMAC-SHA-256 (see
// blocksync.Algorithm): a granule that differs can never pass for equal.
//
// The end-to-end check: both sides fold granule digests, in order, into
// a whole digest: the source of SRC's content, the target of what DST
// holds afterwards (its own digest for a granule left alone, the digest
// of a changed granule read back from DST after the write). The target
// takes SRC's size (a file) and fsyncs before it compares them, names a
// new DST only when they are equal, and only then says done; the source
// checks done's digest and counts too. The whole digest is of what the
// source read: SRC written while it was read would pass for synced with
// DST a mix, so the source checks SRC as it was when opened before it
// sends the end, and fails with a *copier.SrcChangedError otherwise
// (unchanged.go). Anything else is an error: a
// *MismatchError when the digests differ, the peer's own error (a
// *blocksync.OpError naming op, path, offset and errno; a
// *blocksync.RefusedError with its Kind) inside a *RemoteError, an error
// wrapping ErrProtocol, or an *SSHError when ssh itself failed.
//
// The serving side opens its end as a local sync would
// (blocksync.OpenSource, OpenTarget): SRC read-only, DST refused, before
// anything is written, when mounted, in use, locked, too small, a disk
// image or compressed stream (unless the flags say raw), or sharing
// bytes with the client's end (on the same machine, by boot id: the
// same file or device, or through partitions and loop devices). A client that stops (SIGINT cancels its context) closes the
// session: the server reads EOF and ends, and a DST it was creating is
// never named.
package syncproto
