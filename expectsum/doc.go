// Package expectsum checks the bytes of a source as published against a
// digest its publisher gave (--expect-checksum ALGO:HEX, the line of a
// SHA256SUMS file, CDI's checksum): sha256, sha512 or md5 of the bytes
// read from the transport, before any decompression.
//
// A digest is of the bytes in order. A sequential read hashes them as
// they pass (Reader). A parallel ranged read completes its ranges out of
// order: InOrder takes each range as it arrives, hashes the ones that
// continue the digest at once, and keeps copies of the ones ahead of it in
// a bounded window until the ranges before them came; a range that does
// not fit the window waits (without a copy) until it is next. Memory is
// the window, time is one pass of the hash over the bytes.
package expectsum
