package guard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Free is the room the filesystem holding at (a file, or the folder a new
// one goes into) can give a copy, in bytes: its free blocks (f_bfree for
// root or with CAP_SYS_RESOURCE, who may use the blocks ext4 reserves,
// else f_bavail), plus back, the bytes a file being overwritten there
// hands back (see Allocated). Counts of huge filesystems stop at
// math.MaxInt64 instead of wrapping. It fails when statfs does, or
// reports no blocks at all, which says nothing of room.
func Free(at string, back int64) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(at, &st); err != nil {
		return 0, err
	}
	if st.Blocks == 0 {
		// No figures at all: a FUSE server without statfs for this
		// node answers zeros (go-fuse does). That says nothing of room.
		return 0, errors.New("statfs reports no blocks")
	}
	unit := st.Frsize
	if unit == 0 {
		unit = st.Bsize
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 || hasCapSysResource() {
		// ext4 lets its resuid (root by default) and CAP_SYS_RESOURCE
		// use the blocks it reserves; f_bavail leaves them out.
		blocks = st.Bfree
	}
	return addClamp(mulClamp(int64(blocks), int64(unit)), back), nil
}

// Allocated is how many bytes the file st describes holds on its
// filesystem: its blocks, preallocated ones included (they read as holes
// to SEEK_DATA, so this is the honest bound of what overwriting it frees).
func Allocated(st *unix.Stat_t) int64 {
	return mulClamp(st.Blocks, 512) // st_blocks counts 512-byte units
}

// DataExtents lists the data of [off, end) that fd maps, by SEEK_DATA and
// SEEK_HOLE. Filesystems that cannot map holes (some FUSE and network
// filesystems) answer an error, EINVAL often: the caller then counts the
// whole range as data.
func DataExtents(fd int, off, end int64) (Extents, error) {
	var out Extents
	for off < end {
		ds, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) || (err == nil && ds >= end) {
			break // only holes from off on
		}
		if err != nil {
			return nil, err
		}
		de, err := unix.Seek(fd, ds, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		de = min(de, end)
		out = append(out, Extent{ds, de - ds})
		off = de
	}
	return out, nil
}

// hasCapSysResource says whether this process may use the blocks a
// filesystem reserves for root (ext4's reserved blocks) without being root.
func hasCapSysResource() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_RESOURCE) != 0
}

// mulClamp and addClamp keep byte counts of huge filesystems at
// math.MaxInt64 instead of wrapping negative.
func mulClamp(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}

func addClamp(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
