package cdi

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ProbeVolume finds the volume as CDI's importer does: a block volume when
// the block device path exists, a filesystem volume otherwise. It opens
// nothing for writing.
func ProbeVolume(p Paths) (Volume, error) {
	st, err := os.Stat(p.BlockDevice)
	switch {
	case err == nil && st.Mode()&fs.ModeDevice != 0 && st.Mode()&fs.ModeCharDevice == 0:
		size, err := deviceSize(p.BlockDevice)
		if err != nil {
			return Volume{}, refuse(p.BlockDevice, "", "cannot be measured: "+err.Error())
		}
		return Volume{Mode: Block, Path: p.BlockDevice, Available: size}, nil
	case err == nil:
		return Volume{}, refuse(p.BlockDevice, "", "exists and is not a block device")
	case !errors.Is(err, fs.ErrNotExist):
		return Volume{}, refuse(p.BlockDevice, "", "cannot be looked at: "+err.Error())
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(p.DataDir, &sfs); err != nil {
		return Volume{}, refuse(p.DataDir, "", "is no volume (neither it nor "+p.BlockDevice+" is there): "+err.Error())
	}
	if st, err := os.Stat(p.DataDir); err != nil || !st.IsDir() {
		return Volume{}, refuse(p.DataDir, "", "is not a directory")
	}
	// f_bsize, as CDI's GetAvailableSpace multiplies by: the same as
	// f_frsize on the filesystems PVCs have (ext4, xfs).
	avail := int64(sfs.Bavail) * sfs.Bsize
	return Volume{Mode: Filesystem, Path: p.DiskImage(), Dir: p.DataDir, Available: avail}, nil
}

// deviceSize is a block device's size: its end, as lseek finds it, read
// only.
func deviceSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Seek(0, io.SeekEnd)
}
