// Package copier is ringcp as a library: it takes two paths and options,
// checks everything that can be checked before the first write, measures
// both ends, decides direct I/O, block size and queue depth, picks the
// io_uring engine or the pool, runs the copy and reports what it did.
// Hypervisor code calls Copy (or Prepare, then Plan.Run) with Options it
// builds itself; the ringcp command is a thin layer of flags over the same
// calls.
//
// # What is checked
//
// Prepare refuses, before DST is created, opened for writing or changed
// in any way, with a *RefusedError whose Kind a program can switch on:
//
//   - bad input (KindBadInput): an unknown mode, a negative or
//     overflowing offset, a range past SRC's end, a SRC whose size is not
//     known before its end (a stream, gzip data) into a device or a range
//     of a file, where Options.SrcSize must announce it;
//   - what is not there (KindNotFound): SRC, DST's folder, a device node
//     in /dev, the target of a dangling symlink;
//   - what cannot be copied here (KindNotSupported): anything but a
//     regular file or a block device, a pseudo filesystem (proc, sysfs),
//     Engine "uring" where io_uring is unavailable or not trusted,
//     Direct "always" where a side cannot, every copy on a system other
//     than Linux;
//   - SRC and DST that overlap, also through partitions and loop devices
//     (KindOverlap);
//   - a DST that is mounted or active swap, or whose disk, partitions or
//     stacked loop devices are (KindMounted; Options.Force never lifts
//     it);
//   - a DST in use: held by device-mapper, LVM, md or bcache, opened
//     exclusively, behind a loop device, a running program (KindInUse;
//     Options.Force lifts it);
//   - a DST another program holds locked (QEMU's image locks, flock, an
//     fcntl write lock, another ringcp), or a SRC open for writing by QEMU
//     (KindLocked);
//   - a block device too small, a copy past the largest file DST's
//     filesystem allows (KindTooSmall); too little free space
//     (KindNoRoom);
//   - a SRC that is a disk image container, unless Options.SrcFormat is
//     "raw" (KindImageFormat);
//   - a DST that may not be written: permissions, read-only, append-only
//     (KindPermission).
//
// Run first acquires everything the copy needs (both ends opened and
// checked to be what Prepare inspected, locks, buffers, the engine); what
// fails there is a refusal too (KindResources, KindChanged...). The
// errno behind a refusal is wrapped: errors.Is(err, syscall.ENOENT) is
// true for a missing SRC. RefusedError.Field names the Options field at
// fault; messages speak of fields ("Options.SrcOffset"), which a front
// end may rewrite into its own words.
//
// # SRCs that are not local files
//
// SRC may also be an http(s):// URL or an s3://bucket/key object (read in
// parallel ranges pinned to its ETag, so that an object that changes
// during the copy fails it: Options.Web), "-" for standard input or a
// named pipe (read once, in order: Options.Stream), and, from any of
// these or a local file, xz, gzip, zstd or bzip2 data, recognized by its
// first bytes and decompressed on the fly (Options.SrcFormat "raw" copies
// it as it is). Options.ExpectChecksum checks the digest of SRC's bytes as
// published (before decompression): a mismatch is an error matching
// *expectsum.MismatchError, and a new DST is discarded.
//
// # dd's everyday ends
//
// SRC may be /dev/zero (zeroes DST the engine's way, for Options.Length
// bytes or, onto a block device or an export, to DST's end) or
// /dev/urandom; DST may be /dev/null (a read test: every byte of SRC
// read, nothing synced) or "-", standard output (Options.Stream.Stdout),
// written once, in order, never a terminal. They are known by device
// number; other character devices, and these on the side where they make
// no sense (/dev/null as SRC), are refused. Verification, checksums,
// Resume and Sync are refused with them (end_char_linux.go,
// end_stdout_linux.go).
//
// # What DST holds after each outcome
//
//   - Run returned nil: the copy is complete and, unless Options.NoSync,
//     durable: fdatasync'ed after the last write (and a new DST's folder
//     synced after naming it). Report.DstState is DstComplete.
//   - A *RefusedError (from Prepare or Run): nothing was written. DST is
//     byte for byte as it was, with its size and mtime.
//   - Any other error, a cancelled context included: the copy stopped.
//     No new requests were started, those in flight were waited for, and
//     what was written was flushed by the same barrier. Report.DstState
//     says what DST holds: DstDiscarded (a new DST never gets its name),
//     DstPrefix (an existing file cut to the Report.Contiguous bytes
//     written without a gap), DstPartial (a device or a range: the first
//     Contiguous bytes, the rest old or new), DstUnknown (the flush
//     failed too). The error names op, path, offset and errno
//     (*engine.OpError, or *engine.CanceledError for a context) and
//     unwraps to the errno: errors.Is(err, syscall.ENOSPC).
//   - A *SrcChangedError: the copy ran to its end, but a file it read
//     (SRC, a loop device SRC's backing file, a file of an image SRC's
//     chain) changed while it was read: its size, mtime or ctime is not
//     what it was when opened. A new DST is discarded (DstDiscarded); an
//     existing one holds a mix of the file's old and new content
//     (DstMixed). A loop device whose backing file's marks cannot be
//     read (removed) is held to the counts of sectors written through
//     the loop devices over that file. A block device other than a loop
//     device keeps no such marks and is not checked. A copy stopped or
//     failed before its end whose SRC changed reports DstMixed too,
//     unless it kept no byte of SRC.
//   - An error matching engine.ErrUndrained (DstChanging): a backend died
//     with requests in flight. They may still change DST until the
//     process exits; the copy's buffers and descriptors are kept for the
//     life of the process.
//
// A process killed with SIGKILL, or a machine that crashes, leaves a new
// DST unnamed (a leftover temporary name is removed by the next copy to
// the same DST), and an existing DST partly written at its full size.
//
// # Sharing a busy host
//
// A copy fits a rate cap (Options.MaxRate, changed while it runs with
// Plan.SetMaxRate, at once) and the cgroup I/O limits it finds on SRC's
// and DST's disks, and uses all of them (share.go); its read passes fit
// the read limits of the disks they read (readfit.go); Options.IOPrio
// gives its I/O a priority; Options.Yield backs it off while others wait
// on the disk (yield.go). A cancelled context ends a copy waiting on any
// of them at once.
//
// # What may be called concurrently
//
// Prepare, Copy and Plan.Run may run on many goroutines at once, for
// different DSTs: each copy has its own descriptors, buffers and engine
// (on a locked OS thread while it runs). Two copies onto one existing DST
// are kept apart by the locks: the second is refused (KindLocked); of two
// copies to one new name, the second to finish fails rather than replace
// the first. A Plan runs once. Plan.Status may be called from any goroutine before, while and
// after Run runs. Options.OnProgress is called from one goroutine at a
// time, every Options.ProgressInterval and once more at the end, never
// after Run returned. The package installs no signal handlers and starts
// no goroutine that outlives Run (but for a backend left after
// ErrUndrained); a cancelled context is how a caller stops a copy.
//
// # Progress
//
// Status has what a platform shows or exports: the phase (copy, sync
// while the barrier runs, done), the bytes done (completed writes, zeroed
// ranges and holes, never submitted ones; it only grows) out of the total,
// a percent that reaches 100 only when the copy is done, the data, zero
// and hole split, a smoothed rate and an ETA. The ringcp command prints
// the same fields as JSON lines (--progress json).
//
// # Several copies at once
//
// PrepareAll and Batch.Run do the same for several copies at once in one
// process (a VM's disks; ringcp --jobs): one budget of buffers shared in
// fair shares, one rate cap, refusals across the jobs (one DST twice, a
// DST that is or overlaps another job's SRC, files that do not fit on
// their filesystem together), every job's resources acquired before any
// job writes, and a job that fails stops alone (batch.go).
//
// # Trusting the result (trust.go)
//
// With Options.Verify, Run reads DST's range back after the barrier, from
// the device rather than the page cache (an NBD DST from its server), and
// compares it with digests of
// what it read from SRC; a difference is a *MismatchError (the first
// differing byte, the 4 MiB blocks that differ), and a new DST then never
// gets its name. Options.Checksum puts a block checksum of SRC in the
// Report, from the data the copy read (the oVirt imageio checksum with
// package blkhash, which copier does not import: no x/crypto for a
// program that does not ask for it). With
// Options.Resume a state file records, after each periodic barrier, the
// prefix of the range that is on DST and flushed; Run with the same
// options continues from it, after checking that SRC, DST, the range and
// the size policy are the ones it records, and that the prefix is still
// what the earlier run wrote: DST's marks unchanged, or the prefix
// compared with SRC (a *RefusedError otherwise, before any write).
// StateIn names one state per DST in a folder, for a batch. Compare and
// Checksum read existing files or devices and write nothing.
//
// # Kinds of end
//
// What an end is decides much of what is checked and how it is copied,
// and lives with its kind (end.go says what the Plan asks of one;
// kinds.go registers them by how an operand is recognized). A path is a
// local file or block device (the end_file_* files): guard's checks,
// locks, space, O_DIRECT, a new DST
// created unseen. SRC and DST may also be NBD URIs
// (nbd://host[:port]/export, nbd+unix:///export?socket=PATH, and nbds://
// and nbds+unix:// over TLS; end_nbd_linux.go): Prepare connects and
// refuses a URI it cannot serve (vsock, TLS without X.509), a server it
// cannot reach or whose TLS certificate it cannot verify, a read-only DST
// export, a DST export without FLUSH (unless NoSync) or smaller than the
// range, the same export at both ends, and offsets or a block size that
// are not multiples of the server's minimum block size. The checks of
// local files apply to local ends only. An NBD DST is never truncated,
// its zero runs become WRITE_ZEROES (skipped with TargetIsZero), and only
// a successful FLUSH makes it synced. Verify reads an export DST back from
// its server; Resume works into an export (StatePath given; the state
// names it by URI and size), not from one; Compare and Checksum read
// exports too. Prepare's connections are the copy's: Run closes them, and
// Plan.Close does for a plan that is not run.
package copier
