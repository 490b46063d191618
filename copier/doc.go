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
// On a busy host (share.go, yield.go) a copy fits a rate cap
// (Options.MaxRate, changed while it runs with Plan.SetMaxRate) and the
// cgroup I/O limits it finds on SRC's and DST's disks, and uses all of
// them; Options.IOPrio gives its I/O a priority; Options.Yield backs it off
// while others wait on the disk.
//
// Hypervisor code calls Copy (or Prepare, then Run) with Options it builds
// itself; the ringcp command is a thin layer of flags over the same calls.
package copier
