package copier

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Which filesystems io_uring may copy on.
//
// The engine trusts a completion's count: a short read or write is
// resubmitted from where it stopped, an error fails the copy. So io_uring
// is safe on a filesystem only if its completions never report more than
// was really moved. They can, through io_uring's own retry of a short
// request (io_uring/rw.c: __io_read's retry loop, io_rw_should_retry,
// io_write's "partial write" path that returns -EAGAIN with bytes_done):
// on a regular file or block device (need_complete_io) io_uring advances
// its iterator by the short count and issues the rest again at
// kiocb->ki_pos, counting on the filesystem's ->read_iter/->write_iter to
// have advanced ki_pos by what it returned. A filesystem that returns a
// positive short count from a kiocb with ki_complete set (io_uring's)
// without advancing ki_pos gets the rest of the buffer read from, or
// written at, the request's original offset again, and io_uring adds the
// counts up to a full-length completion.
//
// FUSE does exactly that when the server opened the file with
// FOPEN_DIRECT_IO (virtiofs cache=none, sshfs -o direct_io, rclone,
// mergerfs cache.files=off): fs/fuse/file.c fuse_direct_read_iter (every
// asynchronous read on 6.18; older kernels only with O_DIRECT) and
// fuse_direct_write_iter (with O_DIRECT) go through fuse_direct_IO, which
// moves a local copy of the position (fuse_direct_io(io, iter, &pos, ...))
// and never ki_pos. A
// fault inside a request, or a file shorter than its size, becomes a
// full-length success holding the wrong bytes (faultfs's
// TestDirectIOURing shows it on 6.18). The server decides per open, so
// no FUSE file can be trusted: the pool's pread and pwrite (synchronous
// kiocbs, __fuse_direct_read with &iocb->ki_pos) see the honest count.
//
// Reads are retried inline only when io_uring issued them non-blocking,
// which it does on FUSE because FUSE files have ->poll; a short write is
// retried from any context (io_write returns -EAGAIN for the rest).
//
// overlayfs (fs/overlayfs/file.c ovl_read_iter, ovl_write_iter) hands the
// request to the file below through fs/backing-file.c
// backing_file_read_iter/_write_iter, which copies that file's ki_pos back
// (backing_aio_cleanup): it is as safe as the filesystem below, which may
// be FUSE and cannot be seen from here. On 6.18 its reads happen to come
// back honest over a FOPEN_DIRECT_IO mount (no ->poll, so they are issued
// blocking from a worker and not retried: faultfs's
// TestOverlayDirectIOURingRead), but a short write is retried at the
// lower file's unmoved ki_pos all the same.
//
// NFS (fs/nfs/direct.c nfs_file_direct_read/_write: ki_pos advanced by
// the result; async completions report dreq->count, the bytes moved) and
// SMB and 9p (fs/netfs direct_read.c/direct_write.c: ki_pos advanced by
// rreq->transferred; an error wins over a partial count) look right on
// reading, but the test machines' kernel has no NFS, SMB or 9p client, so
// they stay off the list until a test against a real server proves them.
//
// The list holds what was checked: ext2/3/4, xfs, f2fs (iomap_dio_rw, and
// iomap_dio_complete advances ki_pos; an error mid-request fails the whole
// request), btrfs (its btrfs_direct_read/_write on top of iomap), tmpfs
// (shmem_file_read_iter and generic_perform_write advance ki_pos; O_DIRECT
// is the same path), bcachefs (bch2_read_iter and bch2_direct_write
// advance ki_pos; its last in-tree sources, it left the kernel in 6.18).
// ext4, xfs, btrfs and tmpfs are tested (TestEngineRule); f2fs and
// bcachefs, which the test kernel lacks, are checked by reading only.
// Buffered I/O on all of them is filemap_read and generic_perform_write,
// which advance ki_pos. Block devices are always allowed: blkdev_read_iter and
// blkdev_write_iter advance ki_pos, and what a driver does below (a loop
// device over a FUSE file) reaches both engines alike.
var filesystems = map[uint32]struct {
	name  string
	uring bool // io_uring's counts were checked to be honest here
}{
	magicExt4:     {"ext4", true}, // also ext2 and ext3
	magicXFS:      {"xfs", true},
	magicBtrfs:    {"btrfs", true},
	magicTmpfs:    {"tmpfs", true},
	magicF2FS:     {"f2fs", true},
	magicBcachefs: {"bcachefs", true},
	magicFUSE:     {"fuse", false}, // also virtiofs, fuseblk
	magicOverlay:  {"overlayfs", false},
	magicNFS:      {"nfs", false},
	magicSMB2:     {"smb", false},
	magicCIFS:     {"cifs", false},
	magic9P:       {"9p", false},
	magicCeph:     {"ceph", false},
	magicOCFS2:    {"ocfs2", false},
	magicRamfs:    {"ramfs", false},
	magicZFS:      {"zfs", false},
	magicGFS2:     {"gfs2", false},
	magicLustre:   {"lustre", false},
}

// Filesystem magics (statfs f_type) the rule names; offload_linux.go has
// the rest.
const (
	magicExt4    = 0xef53
	magicTmpfs   = 0x01021994
	magicF2FS    = 0xf2f52010
	magicFUSE    = 0x65735546
	magicOverlay = 0x794c7630
	magic9P      = 0x01021997
	magicRamfs   = 0x858458f6
	magicZFS     = 0x2fc12fc1
	magicGFS2    = 0x01161970
	magicLustre  = 0x0bd00bd0
)

// Why io_uring is kept off a filesystem, where there is more to say than
// that it was not checked.
var uringWhy = map[uint32]string{
	magicFUSE:    "the kernel can complete a short FUSE direct-I/O request as whole",
	magicOverlay: "overlayfs passes I/O to the filesystem below it, which may be FUSE, and which ringcp cannot see",
}

const uncheckedWhy = "ringcp has not checked that the kernel reports its short reads and writes as short there"

// uringObstacle judges one side: a block device is fine, a file by its
// filesystem (for a new DST, its folder's).
func (f *fileEnd) uringObstacle(tag string) string {
	if f.isBlock {
		return ""
	}
	at := f.fsPath()
	var st unix.Statfs_t
	if err := unix.Statfs(at, &st); err != nil {
		return fmt.Sprintf("io_uring is not used: cannot tell the filesystem of %s %s (statfs %s: %v)", tag, f.ep.path, at, err)
	}
	return uringVerdict(uint32(st.Type), tag+" "+f.ep.path)
}

// uringVerdict is the rule for one filesystem magic; where names the side.
func uringVerdict(magic uint32, where string) string {
	fs, known := filesystems[magic]
	if fs.uring {
		return ""
	}
	name := fs.name
	if !known {
		name = fmt.Sprintf("filesystem type %#x", magic)
	}
	why := uringWhy[magic]
	if why == "" {
		why = uncheckedWhy
	}
	return fmt.Sprintf("io_uring is not used on %s (%s): %s", name, where, why)
}
