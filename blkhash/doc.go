// Package blkhash computes the oVirt imageio block checksum of a disk
// image, so that a platform can compare ringcp's figure with what
// imageio's checksum API (GET /images/TICKET/checksum) and its tools say.
//
// # The algorithm (ovirt_imageio/_internal/blkhash.py)
//
// The image is cut into BlockSize (4 MiB) blocks from its first byte; the
// last block is shorter when the size is not a multiple of BlockSize, and
// is hashed as it is (not padded). Each block's digest is BLAKE2b with a
// 32-byte digest and no key. The block digests, raw (32 bytes each) and in
// order, feed an outer BLAKE2b-256, whose hex digest is the checksum. An
// empty image's checksum is the outer hash of nothing. A block of zeros
// always has the same digest (ZeroDigest), so holes and zero runs cost no
// reading or hashing: imageio uses its extents and a zero test on the data
// the same way, and the result is the same as hashing every byte.
//
// # Contract
//
// Sum assembles block digests given in any order into the checksum.
// Hasher hashes blocks of data on worker goroutines (BLAKE2b runs at
// about 1 GB/s on one core, the speed of a disk), copying each block
// first, so the caller's buffer is free again on return.
package blkhash
