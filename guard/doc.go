// Package guard says what is true, on this system, of the files and block
// devices a copy would read and write, before anything is written:
//
//   - whether they reach the same bytes, also through partitions and loop
//     devices (FindOverlap);
//   - whether a target is mounted or active swap, in this or another mount
//     namespace, or in use: held by device-mapper, md or bcache, open
//     exclusively by another program, shown by a loop device (FindBusy);
//   - who holds QEMU's image locks, fcntl or flock locks on it, and taking
//     those locks the way QEMU's readers and writers do (CheckSrc,
//     CheckDst, LockSrc, LockDst, Conflict.Holders);
//   - the filesystem a path is on: a pseudo filesystem (PseudoFS),
//     devtmpfs (DevtmpfsMount), its free room (Free), the largest file it
//     allows (FileLimit); whether a file can be opened for writing
//     (CheckWritable);
//   - what a file holds: its data extents (DataExtents), how much of them
//     is not zeros (NonZero), whether it is a disk image container
//     (ImageFormat).
//
// # Contract
//
// guard only looks. It opens what it inspects read-only (a block device
// with O_EXCL for a moment, which fails while someone holds it), writes
// nothing, and takes no lock that outlives a call, except LockSrc and
// LockDst, whose locks last as long as the caller's descriptor. It
// decides nothing either: it returns findings (a Busy list, an Overlap, a
// Conflict with its holders, a filesystem's name) and leaves the verdict,
// what may be overridden and how to say it, to the caller. The copier
// package turns them into its refusals; hypervisor code that wants only
// the checks can call them on its own paths.
//
// Objects are named by what the kernel identifies them by: a block device
// by its device number, a regular file by device and inode (Object), so
// that two paths, two device nodes or a loop device's backing compare
// equal when they are the same thing.
package guard
