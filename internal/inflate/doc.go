// Package inflate decodes raw deflate (RFC 1951) in one call, when the
// whole output's size is known and the input is in memory: a compressed
// qcow2 cluster (QEMU's "zlib" type, one stream per cluster of 512 bytes
// to 2 MiB), a compressed vmdk grain (its zlib framing taken off by the
// caller). DecodeWhole also wants the stream to end where the output is
// full: the qcow2 writer's check of a cluster it shortened. DecodeUpTo
// wants the stream to end at or before that, and says where it ended (a
// vmdk grain's Adler-32 follows it; QEMU's uncompress checks it). A stream of
// unknown length, read as it comes (gzip in unpack/), is not for it.
//
// Decode writes straight into the output: a match copies from what it
// already wrote, so there is no sliding window and no copy out of one
// (a streaming reader such as compress/flate keeps 32 KiB of history and
// copies every byte out of it). Bits are read 64 at a time, and Huffman
// codes are decoded with a table lookup of 11 bits (8 for distances)
// plus a sub-table for longer codes, each entry holding the symbol's base
// value and extra-bit count (libdeflate's approach).
//
// Its contract is io.ReadFull over compress/flate's reader: it stops when
// the output is full (bytes after that in the input, even a damaged rest
// of the stream, are not looked at) and fails when the stream ends
// first. It accepts the Huffman codes compress/flate accepts (complete
// ones, a single code of one bit, or none, which fails when used), and
// fails with an error, never a panic, on anything else: it never reads
// past the input nor writes past the output.
package inflate
