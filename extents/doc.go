// Package extents reads lists of byte ranges (which parts of a disk to
// copy: a platform's changed-block list, a dirty bitmap's dirty extents)
// and does the arithmetic on them that a copy of only those parts needs.
// It is pure: no I/O beyond the io.Reader it is given, no system calls,
// so the command (--extents FILE), copier (planning) and the sync (NBD
// dirty bitmaps) share one tested definition of what a list means.
//
// # The formats
//
// Text: one range a line, "OFFSET LENGTH", two decimal numbers of bytes
// separated by spaces or tabs. '#' starts a comment that runs to the end
// of the line; blank lines are skipped; a CR before the newline is
// ignored. There are no size suffixes (4K, 1M) and no hexadecimal: these
// lists are written by programs (VMware's QueryChangedDiskAreas through
// a converter, qemu-img map, nbdinfo --map, a backup tool), and a suffix
// would only add the K-is-1000-or-1024 question and let a typo scale a
// range silently. A line longer than MaxLine bytes is an error.
//
// JSON: an array of objects {"offset": N, "length": N}, both required,
// whole non-negative numbers, no other keys (a misspelt key is an error,
// not a range at 0).
//
// Parse tells them apart by the first byte that is not white space: '['
// is JSON. Each range keeps where it came from (Entry.Line), so that a
// range past an end is reported by its line.
//
// # Meaning
//
// A list is a set of bytes: order does not matter, and overlapping or
// adjacent ranges merge (Merge). A range of length 0 is allowed and adds
// nothing, but its offset must still lie within both ends. The normal
// form, List, is sorted, with no two ranges overlapping or touching and
// none empty; every operation here takes and returns that form.
//
// Check refuses, before anything is written, a range that ends past
// SRC's or DST's end (the caller passes both sizes; SRC offset equals
// DST offset), naming its line.
//
// The algebra: Intersect (a list within [off, end)), Gaps (its
// complement there), Union, AlignOut (each range widened to whole
// granules, for O_DIRECT alignment or a dirty bitmap's granularity,
// clipped at an end), and Chunks (the ranges cut into pieces of at most
// a block, never crossing a multiple of the block size, as the engine's
// chunks are).
package extents
