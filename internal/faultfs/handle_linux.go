package faultfs

import (
	"context"
	"github.com/ringcp/ringcp/internal/eintr"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// openFlags is what open and create answer the kernel: nothing, or
// FOPEN_DIRECT_IO in the DirectIO mode.
//
// FOPEN_DIRECT_IO sends every read and write to the server at the
// application's own offsets, even without O_DIRECT. On Linux 6.18 it
// breaks io_uring: an IORING_OP_READ or _WRITE that FUSE completes short
// (a fault in its second or later 128 KiB piece, or plain end of file) is
// reissued from the original file offset into the rest of the buffer until
// the buffer is full, and completes with the full length. A 1 MiB read of
// a 300000-byte file returned 1048576 bytes, the file's bytes over and
// over; a 1 MiB write whose third piece failed returned 1048576 with 256
// KiB written. The cause: for an asynchronous kiocb (io_uring's)
// fuse_direct_read_iter and, with O_DIRECT, fuse_direct_write_iter go
// through fuse_direct_IO, which advances a local copy of the position and
// never iocb->ki_pos, while io_uring's retry of a short read or write
// (__io_read, io_write) counts on ki_pos having moved. pread and pwrite
// (synchronous kiocbs) see the proper short count and then the errno
// (TestDirectIOURing).
//
// Without FOPEN_DIRECT_IO (the default mode), io_uring, pread and pwrite
// all see a proper short count and then the fault's errno (TestIOURing,
// TestReadFault, TestWriteFault): O_DIRECT goes through
// generic_file_read_iter and generic_file_direct_write, which advance
// ki_pos; buffered I/O goes through the page cache, with the consequences
// doc.go lists. That is why the default mode is the page-cache one: the
// engine's io_uring backend can be driven through faults there.
//
// Never FOPEN_KEEP_CACHE, so the kernel drops the file's page cache on
// every open: each open starts from the backing file.
//
// The handle does not implement go-fuse's FilePassthroughFder on purpose:
// FUSE passthrough would send I/O straight to the backing file, past the
// faults.
func (fs *FS) openFlags() uint32 {
	if fs.directIO {
		return fuse.FOPEN_DIRECT_IO
	}
	return 0
}

// backingFlags turns the flags the kernel sent with OPEN or CREATE into
// flags for opening the backing file. Kept: the access mode, O_TRUNC,
// O_EXCL, O_SYNC and O_DSYNC, and O_DIRECT in the PassDirect mode.
// Dropped:
//   - O_DIRECT otherwise: it governs the application's side, which the
//     kernel already handles (no page cache for the request); on the
//     backing file it could be refused (tmpfs before Linux 6.6) and
//     imposes the backing file system's alignment on the server's
//     requests, which is what PassDirect is for.
//   - O_APPEND: the kernel computes the append offset and sends it in each
//     WRITE; a backing O_APPEND would make pwritev ignore that offset.
//   - O_NOATIME, FMODE_EXEC and the rest: meaningless for the backing file.
func (fs *FS) backingFlags(flags uint32) int {
	keep := unix.O_ACCMODE | unix.O_TRUNC | unix.O_EXCL | unix.O_SYNC | unix.O_DSYNC
	if fs.passDirect {
		keep |= unix.O_DIRECT
	}
	return int(flags)&keep | unix.O_CLOEXEC
}

// handle is one open file: a descriptor on the backing file, and the name
// faults and hits are matched against.
type handle struct {
	fsys *FS
	name string
	fd   int
}

var (
	_ fusefs.FileReader    = (*handle)(nil)
	_ fusefs.FileWritever  = (*handle)(nil)
	_ fusefs.FileFsyncer   = (*handle)(nil)
	_ fusefs.FileFlusher   = (*handle)(nil)
	_ fusefs.FileReleaser  = (*handle)(nil)
	_ fusefs.FileLseeker   = (*handle)(nil)
	_ fusefs.FileAllocater = (*handle)(nil)
)

// Read fails with a fault's errno if one covers [off, off+len(dest)), and
// otherwise preads the backing file. A short count at end of file goes back
// to the kernel as is.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if errno := h.fsys.inject(OpRead, h.name, off, len(dest)); errno != 0 {
		return nil, errno
	}
	n, err := eintr.Retry(func() (int, error) { return unix.Pread(h.fd, dest, off) })
	if err != nil {
		return nil, fusefs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// Writev fails with a fault's errno if one covers the request, and
// otherwise pwritevs the backing file. go-fuse hands a WRITE over as one or
// more buffers; implementing Writev alone takes both without a copy.
func (h *handle) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	size := 0
	for _, b := range data {
		size += len(b)
	}
	if errno := h.fsys.inject(OpWrite, h.name, off, size); errno != 0 {
		return 0, errno
	}
	if at := h.fsys.corruption(h.name, off, size); at != nil {
		data = [][]byte{corrupt(data, size, at)}
	}
	n, err := eintr.Retry(func() (int, error) { return unix.Pwritev(h.fd, data, off) })
	if err != nil {
		return 0, fusefs.ToErrno(err)
	}
	// A short count goes back as is: the kernel reports a short write to
	// the application.
	return uint32(n), 0
}

// Fsync fails with an OpFsync fault's errno, and otherwise fsyncs (or, for
// fdatasync, fdatasyncs) the backing file.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if errno := h.fsys.inject(OpFsync, h.name, 0, 0); errno != 0 {
		return errno
	}
	// Bit 0 of FUSE_FSYNC's flags is FUSE_FSYNC_FDATASYNC.
	if flags&1 != 0 {
		return fusefs.ToErrno(unix.Fdatasync(h.fd))
	}
	return fusefs.ToErrno(unix.Fsync(h.fd))
}

// Flush succeeds: FLUSH comes with every close, and every write already
// reached the backing file, so there is nothing left to push.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	return 0
}

// Release closes the backing descriptor after the last close of the file.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	return fusefs.ToErrno(unix.Close(h.fd))
}

// Lseek answers SEEK_DATA and SEEK_HOLE from the backing file, so a sparse
// copy through the mount sees the backing file's holes. It moves the
// backing descriptor's offset, which nothing else uses: reads and writes
// are positional. An inflated file (Options.Inflate) is all data up to
// the size it claims, as a server that believes its own size would say.
func (h *handle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	if extra := h.fsys.inflate[h.name]; extra > 0 {
		return h.inflatedSeek(off, whence, extra)
	}
	n, err := unix.Seek(h.fd, int64(off), int(whence))
	if err != nil {
		return 0, fusefs.ToErrno(err)
	}
	return uint64(n), 0
}

// inflatedSeek is Lseek on a file that claims extra bytes past its backing
// file's end: data everywhere below the claimed size, ENXIO at or past it.
func (h *handle) inflatedSeek(off uint64, whence uint32, extra int64) (uint64, syscall.Errno) {
	var st syscall.Stat_t
	if err := syscall.Fstat(h.fd, &st); err != nil {
		return 0, fusefs.ToErrno(err)
	}
	size := uint64(st.Size + extra)
	switch {
	case whence != unix.SEEK_DATA && whence != unix.SEEK_HOLE:
		return 0, syscall.EINVAL
	case off >= size:
		return 0, syscall.ENXIO
	case whence == unix.SEEK_DATA:
		return off, 0
	}
	return size, 0
}

// Allocate passes fallocate (preallocation, punching holes) to the backing
// file.
func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	return fusefs.ToErrno(unix.Fallocate(h.fd, mode, int64(off), int64(size)))
}

// corrupt returns the request's bytes in one buffer of their own, with the
// bytes at the given offsets inverted.
func corrupt(data [][]byte, size int, at []int) []byte {
	b := make([]byte, 0, size)
	for _, d := range data {
		b = append(b, d...)
	}
	for _, i := range at {
		b[i] ^= 0xff
	}
	return b
}
