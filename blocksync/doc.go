// Package blocksync makes one disk or image equal to another by writing
// only the granules that differ: the core of `ringcp sync`, apart from
// the engine and the network.
//
// # Contract
//
// SRC and DST are cut into granules (4 KiB by default, at most 64 KiB,
// so that a changed 4 KiB costs at most one granule to write); the last
// one may be shorter. A granule is left alone when DST's bytes equal
// SRC's; otherwise it is written from SRC, or, when SRC's granule is all
// zeros, zeroed in DST (a hole punched where DST can, as a copy would
// leave it). DST ends up SRC's size, as a copy leaves it: a regular file
// is cut or extended (the extension reads as zeros, so SRC's zero
// granules there cost nothing); a block device keeps its size, its bytes
// past SRC's end untouched, and one smaller than SRC is refused before
// anything is written. The result is durable (fsync) before Sync
// returns success.
//
// Compare is the pure step: one window of SRC and the same window of DST
// in memory in, the runs of granules to write or zero out. Sync is a
// reference implementation around it, usable until the engine runs the
// same step through io_uring: large reads of both ends at once from
// several goroutines, each window compared in memory, only the
// differences written.
//
// Locally both sides are in memory, so they are compared byte by byte
// (bytes.Equal runs at memory speed, far faster than any digest: see
// BenchmarkCompare). Across a network one side sends digests of its
// granules instead (package syncproto); Digester computes them with a
// cryptographic hash, keyed per session: a guest that controls the
// content of its own disk must not be able to craft two granules that
// compare equal, as it could against a fast non-cryptographic hash.
//
// Ends on this host are opened with OpenSource (read-only, never for
// writing) and OpenTarget, which refuse, before anything is written, what
// a copy would refuse: a DST that is mounted or in use, locked by QEMU or
// another program, the same bytes as SRC, neither a regular file nor a
// block device. Errors name op, path, offset and errno (*OpError), and
// refusals carry a Kind (*RefusedError) whose values match copier's.
package blocksync
