// Package unpack decompresses images on the fly: xz, gzip, zstd and
// bzip2, recognized by their first bytes from any transport (a file, a
// URL, a pipe), given as one sequential stream of the decompressed bytes,
// with counts of the compressed bytes read (progress) and of the bytes
// produced.
//
// # Integrity
//
// A corrupt or truncated input ends in an error, never in a short stream
// that looks complete: xz's block checks (CRC32, CRC64, SHA-256), its
// block and index sizes and its header, index and footer CRC32s; gzip's
// CRC32 and ISIZE per member; zstd's content checksum when the frame has
// one, and its frame and block structure; bzip2's block and stream CRCs.
// Input ending inside any of them is io.ErrUnexpectedEOF.
//
// # Cores
//
// Where the format cuts its data into pieces that decode on their own,
// the pieces are decoded on all cores (Options.Threads) and given in
// order:
//   - xz: blocks. xz -T0 (any -T but 1) writes several (three
//     dictionaries each: 24 MiB at -6), each with its compressed and
//     uncompressed size in its header, so one sequential pass finds them
//     without the index at the end; the index is then checked against
//     what was decoded. xz -T1 (one block, or --block-size blocks) gives
//     no sizes in its headers: those blocks decode in place, on one core.
//     With random access the index would give their bounds too (XzSize
//     reads it); not done, since xz -T0, the usual maker of multi-block
//     files, needs no index.
//   - zstd: frames. pzstd writes many independent frames; zstd -T0 writes
//     one frame (its threads share history), which klauspost's decoder
//     decodes with its block pipeline (about two cores' worth at most).
//   - gzip: no. pigz writes one member, one deflate stream whose blocks
//     depend on the 32 KiB before them; member boundaries are not marked
//     (except in BGZF's extra field), so finding them means inflating.
//     gzip decodes on one core (klauspost's inflater), on a goroutine
//     of its own that overlaps the reader's work with Threads > 1.
//   - bzip2: one core (the standard library's), likewise.
//
// # LZMA2
//
// xz's one filter decoded here is decoded by this package (lzma*.go), not
// a library: each LZMA2 chunk says its sizes, so it is read whole and
// decoded at once into a window that holds the dictionary (a block's
// whole output when its size is known), and a match, a run of zeros
// included, is a copy or a few doubling copies rather than a byte at a
// time through a ring. On a mostly-zero image that is about 6x less CPU
// than github.com/ulikunitz/xz v0.5.15, which it replaced
// (BenchmarkUnpackSparse).
//
// A piece larger than Options.MaxUnit, or whose size is not known
// before it is decoded, is decoded in place, in order, on one core.
package unpack
