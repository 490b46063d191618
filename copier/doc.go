// Package copier is ringcp as a library: it takes two paths and options,
// checks everything that can be checked before the first write, measures
// both ends, decides direct I/O, block size and queue depth, picks the
// io_uring engine or the pool, runs the copy and reports what it did.
//
// # Contract
//
// Prepare refuses bad input and unsafe targets with a *RefusedError before
// DST is created, opened for writing or changed in any way; SRC is only
// ever opened read-only. Run then creates or opens DST, copies, sets a
// regular file DST's size and ends with the fdatasync barrier, and returns
// a Report; on failure the error names the op, path, offset and errno
// (*engine.OpError) and the Report says what was done. Success is only
// returned for a copy that is complete and durable (unless Options.NoSync).
//
// Prepare refuses, on what package guard finds (inuse_linux.go,
// checks_linux.go, lock_linux.go, room_linux.go): SRC and DST that
// overlap, also through partitions and loop devices; a DST that is
// mounted, active swap, or whose disk, partitions or stacked loop devices
// are; a DST in use (sysfs holders, another O_EXCL opener, a loop device
// on it) unless Options.Force; a DST someone holds locked; a block device
// DST too small; a range past SRC's end; anything but regular files and
// block devices. Report.DstState says what a failed or interrupted copy
// left in DST: a new DST is discarded, an existing file cut to the prefix
// written without gaps.
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
// the device rather than the page cache, and compares it with digests of
// what it read from SRC; a difference is a *MismatchError (the first
// differing byte, the 4 MiB blocks that differ), and a new DST then never
// gets its name. Options.Checksum puts a block checksum of SRC in the
// Report, from the data the copy read (the oVirt imageio checksum with
// package blkhash, which copier does not import: no x/crypto for a
// program that does not ask for it). With
// Options.Resume a state file records, after each periodic barrier, the
// prefix of the range that is on DST and flushed; Run with the same
// options continues from it, after checking that SRC, DST and the range
// are the ones it records (a *RefusedError otherwise). Compare and
// Checksum read existing files or devices and write nothing.
//
// Hypervisor code calls Copy (or Prepare, then Run) with Options it builds
// itself; the ringcp command is a thin layer of flags over the same calls.
package copier
