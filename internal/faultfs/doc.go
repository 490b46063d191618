// Package faultfs mounts a FUSE file system inside a Go test that serves the
// regular files of a backing directory and fails chosen reads, writes and
// fsyncs with chosen errnos. The copy engine's tests use it to prove that an
// I/O error at a known offset fails a copy with a message naming the op,
// path, offset and errno, and that nothing leaks.
//
// # Contract
//
// Mount(t, backingDir, faults...) mounts on a fresh t.TempDir and unmounts
// in t.Cleanup; MountWith(t, backingDir, Options{...}) does the same with
// the modes below; it skips the test when FUSE is missing or mounting is not
// permitted. The mount is flat: it shows the regular files of backingDir
// and nothing else. Reads and writes are pread and pwritev on a descriptor
// of the backing file, so a copy through the mount is byte-exact except
// where a fault fires. Stat shows the backing file's real size (entry and
// attribute timeouts are zero). Create, O_TRUNC, truncate, rename, unlink,
// chmod, chown, utimes, fallocate, SEEK_DATA/SEEK_HOLE, fsync and statfs
// pass through; flush and close succeed.
//
// A Fault fails every READ or WRITE request whose byte range contains its
// Offset, or every FSYNC, on every file or on the file it names, for as
// long as the mount lives; an OpCorrupt fault instead lets such a WRITE
// succeed with the byte at Offset stored inverted (silent corruption, for
// read-back verification to find). FS.Hits lists the faults actually returned.
// FS.Unmount fails with EBUSY while anything still holds a file under the
// mount, which is how a test asserts that nothing leaked; the cleanup fails
// the test in that case, then detaches the mount and aborts its connection.
//
// # What the server sees (Linux 6.18, pinned by this package's tests)
//
// No request is larger than MaxRequest (128 KiB).
//
// O_DIRECT works: open and create with O_DIRECT succeed, and the I/O reaches
// the server at the application's own offsets, split into MaxRequest
// pieces (shorter ones when the buffer is not page-aligned: a piece is at
// most 32 pinned pages). FUSE enforces no O_DIRECT alignment at all, and
// statx reports no STATX_DIOALIGN for the mount.
//
// Buffered I/O goes through the page cache. Reads arrive as page-aligned
// readahead, a read fault fails its whole page, and readahead can hit a
// fault the application never reads (a Hit with no failed call). Buffered
// writes are write-through, at the application's offsets, split at
// MaxRequest. Each open drops the file's cached pages.
//
// An application read or write over a fault completes short, then its
// remainder fails with the fault's errno:
//
//   - io_uring with O_DIRECT: short at the MaxRequest piece before the fault.
//   - pread with O_DIRECT: the kernel continues a short direct read through
//     the page cache, so it is short at the fault's page.
//   - pwrite with O_DIRECT, and buffered writes: short at the piece.
//   - buffered reads: short at the fault's page.
//
// So the offset off at which a caller finally sees the errno satisfies
// off <= Offset < off+MaxRequest; assert that, not an exact offset. One
// application call can produce several hits (the kernel retries a short
// direct I/O's remainder through the page cache, readahead retries page by
// page, io_uring and splice retry), so assert what hits cover, not how many
// there are.
//
// copy_file_range through the mount copies by READ and WRITE requests (the
// server implements no COPY_FILE_RANGE), so faults stop it too.
//
// # The DirectIO mode (Options.DirectIO)
//
// By default files are not opened with FOPEN_DIRECT_IO. With DirectIO they
// are, as virtiofs (cache=none), sshfs -o direct_io, rclone and mergerfs
// (cache.files=off) open theirs: every read and write, with O_DIRECT or
// without, reaches the server at the application's offsets, with no page
// cache, and pread and pwrite over a fault complete short at the
// MaxRequest piece before it, then fail with the errno.
//
// io_uring does not: on Linux 6.18 a READ that the server completes short
// (a fault, or end of file), and a WRITE with O_DIRECT likewise, is
// reissued from the request's original offset into the rest of the buffer
// until the buffer is full, and completes with the full length. A 1 MiB
// read over a fault in its third piece returns 1 MiB holding the first
// 256 KiB four times; a 1 MiB O_DIRECT write leaves the buffer's last
// 256 KiB at offset 0 and reports 1 MiB written (TestDirectIOURing; the
// kernel paths are in openFlags). An io_uring WRITE without O_DIRECT
// still completes short. This is why copier keeps io_uring off FUSE.
//
// # Sizes that claim too much (Options.Inflate)
//
// An inflated file's stat, lookup and lseek claim Inflate[name] more bytes
// than its backing file holds (lseek: all data up to the claimed size);
// reads past the backing file's end return short, then 0 bytes: a server
// whose file shrank after it reported the size. pread sees the short
// count; io_uring on a DirectIO mount again fills the buffer from the
// request's offset and reports it whole (TestInflate).
//
// # Caveats
//
// A test binary that dies without running its cleanups (SIGKILL, a
// go test -timeout panic) leaves its mount behind; remove it with
// umount -l, and if stat on it hangs, abort the connection through fusectl
// (connections/N/abort, N the mount's minor device number).
package faultfs
