// Package qcow2 reads and writes QEMU's qcow2 disk images without QEMU,
// over abstract transports: a local file or device, or any random-access
// bytes (an HTTP(S) or S3 object), so that one reader serves every kind
// of end.
//
// Reading: Open reads an image's header and metadata from a Transport
// and follows its backing chain (qcow2 or raw files, of any depth up to
// Options.MaxDepth) and external data file through an Opener, which
// decides whether the names an image holds may be followed. The *Image
// gives the guest's bytes (ReadAt, safe for many goroutines: host reads
// of clusters that follow one another are one read; compressed clusters,
// deflate or zstd, decompress on the calling goroutine with pooled
// decoders) and where the data is (Extent, Data, Map: data, zero
// clusters, and holes through the whole chain). Versions 2 and 3, every
// cluster size QEMU allows, zero clusters, extended L2 entries with
// subclusters. Internal snapshots are ignored: the active layer is read.
//
// Refusals are *Error values that unwrap to ErrEncrypted, ErrDirty,
// ErrCorruptBit, ErrUnsupported, ErrMalformed, ErrBackingLoop,
// ErrChainTooDeep, ErrBackingRefused or ErrNotQcow2, and say what to do.
// A malformed image never panics, is never read outside its file, and
// costs memory in proportion to its file at most: every table is checked
// against the file's size before it is read, the L2 tables are cached
// within a budget, and by default Open walks all the metadata (as
// qemu-img check reads it) so that bad entries are refused before the
// first read.
//
// Inspect describes an image and its chain as qemu-img info does, and
// Measure sizes a new image as qemu-img measure does.
//
// Writing: Create starts a new version 3 image on a WriteTransport;
// Writer.WriteAt and WriteZeroes take guest bytes in any order from many
// goroutines (host space is handed out under a lock, data is compressed
// and written outside it); Writer.Close writes the tables, the refcounts
// and the header last, and syncs. Clusters of zeros stay unallocated;
// with a backing file, clusters the same as the backing file's are not
// stored. With WriterOptions.Checkpoints the file is a valid image at
// every instant: Writer.Checkpoint makes what was written so far part of
// it (fresh tables, then the header switched in one sector), and Resume
// takes up an image a stopped Writer left (writer_checkpoint.go,
// writer_resume.go).
//
// The format is QEMU's docs/interop/qcow2.txt.
package qcow2
