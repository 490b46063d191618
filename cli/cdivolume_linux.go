package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/cdi"
	"golang.org/x/sys/unix"
)

// What the importer does to the volume beside the copy: it checks that
// the filesystem volume is one (a mount, not the container's own
// filesystem), clears names an earlier tenant of the volume may have
// planted where the image and its resume files go, and finishes the
// image as CDI leaves it (grown to its size, preallocated, 0660).

// probeVolume finds the volume as CDI's importer does, and refuses a
// filesystem volume whose directory is not a mount of its own: an image
// written there would land in the container's filesystem, lost with the
// container, after a termination message that says it is complete.
func probeVolume(p cdi.Paths) (cdi.Volume, error) {
	vol, err := cdi.ProbeVolume(p)
	if err != nil || vol.Mode == cdi.Block {
		return vol, err
	}
	if err := checkMountRoot(vol.Dir); err != nil {
		return vol, &cdi.Refusal{Name: vol.Dir, Reason: err.Error()}
	}
	return vol, nil
}

// checkMountRoot wants dir to be the root of a mount, and no symbolic
// link to one.
func checkMountRoot(dir string) error {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE, &stx); err != nil {
		return fmt.Errorf("cannot be looked at: %w", err)
	}
	if stx.Mode&unix.S_IFMT != unix.S_IFDIR {
		return errors.New("is not a directory (a symbolic link?): CDI mounts the filesystem volume there")
	}
	if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return nil // a kernel before 5.8 cannot tell; CDI's importer never asks
	}
	if stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return errors.New("is not a mount: the volume is missing, and what is written there would be lost with the container")
	}
	return nil
}

// checkScratch keeps a block volume's resume state in scratch space only
// where it outlives the container: a mount (CDI's scratch PVC, a Job's
// emptyDir) this user may write. A /scratch of the container's own
// filesystem would be lost with it; one the user cannot write fails the
// copy at its first record. Without it the import starts over after a
// restart, as CDI's does.
func checkScratch(t *cdi.Transfer, p cdi.Paths) string {
	if !t.Block || !t.Resume {
		return ""
	}
	why := ""
	if err := checkMountRoot(p.ScratchDir); err != nil {
		why = err.Error()
	} else if err := unix.Access(p.ScratchDir, unix.W_OK|unix.X_OK); err != nil {
		why = "cannot be written: " + err.Error()
	}
	if why != "" {
		t.Resume, t.StatePath = false, ""
	}
	return why
}

// readyVolume clears, on a filesystem volume, what is not a regular file
// of one link where the image, its partial file and its resume state go
// (a symbolic link would have the copy write where it points; a hard
// link, write another name's bytes), and says how many bytes those files
// already take (an earlier run's, free again for this one). On a block
// volume it clears a planted resume state in scratch space.
func readyVolume(vol cdi.Volume, t *cdi.Transfer) (held int64, err error) {
	names := []string{t.StatePath}
	if vol.Mode == cdi.Filesystem {
		names = append(names, vol.Path, vol.Path+".ringcp-partial")
	}
	for _, name := range names {
		if name == "" {
			continue
		}
		var st unix.Stat_t
		switch err := unix.Lstat(name, &st); {
		case errors.Is(err, unix.ENOENT):
			continue
		case err != nil:
			return 0, fmt.Errorf("cannot look at %s: %w", name, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 {
			if vol.Mode == cdi.Filesystem {
				held += st.Blocks * 512
			}
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return 0, &cdi.Refusal{Name: name, Reason: "is a directory where the import writes a file"}
		}
		if err := os.Remove(name); err != nil {
			return 0, fmt.Errorf("cannot remove %s, which is not a file of the import's own: %w", name, err)
		}
	}
	return held, nil
}

// dropResume removes the resume state (and a filesystem volume's partial
// file): the import starts over.
func dropResume(vol cdi.Volume, t *cdi.Transfer) error {
	names := []string{t.StatePath}
	if vol.Mode == cdi.Filesystem {
		names = append(names, vol.Path+".ringcp-partial")
	}
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove %s to start over: %w", name, err)
		}
	}
	return nil
}

// finishVolume leaves a filesystem volume's image as CDI does: grown to
// the size CDI decided (sparse), its every byte allocated when
// preallocation was asked, mode 0660, durable. A block volume is left as
// the copy left it.
func finishVolume(vol cdi.Volume, t *cdi.Transfer, target int64) error {
	if vol.Mode == cdi.Block {
		return nil
	}
	return sizeImage(vol.Path, target, t.Preallocate, t.FileMode, false)
}

// sizeImage opens the image (never through a symbolic link), cuts it to
// nothing first when blank (a blank disk reads zeros), grows it to size,
// allocates it when preallocate, and makes it durable with its folder.
func sizeImage(path string, size int64, preallocate bool, mode os.FileMode, blank bool) error {
	flags := unix.O_WRONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if blank {
		flags |= unix.O_CREAT | unix.O_TRUNC
	}
	fd, err := unix.Open(path, flags, uint32(mode))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() < size {
		if err := f.Truncate(size); err != nil {
			return fmt.Errorf("grow %s to %d bytes: %w", path, size, err)
		}
	}
	if preallocate {
		if err := unix.Fallocate(fd, 0, 0, max(size, st.Size())); err != nil {
			return fmt.Errorf("preallocate %s: %w", path, err)
		}
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// blank makes a blank disk (IMPORTER_SOURCE none): on a filesystem
// volume a sparse disk.img of CDI's size; on a block volume, zeros over
// CDI's size when preallocation is asked, else nothing.
func (j *importJob) blank() cdi.Outcome {
	size := j.cfg.BlankSize(j.vol)
	details := &cdi.Details{Version: moduleVersion(), Size: size, Scratch: "unused"}
	if _, err := readyVolume(j.vol, j.t); err != nil {
		return cdi.Outcome{Err: err}
	}
	if err := dropResume(j.vol, j.t); err != nil { // an earlier import's, of no use to a blank disk
		return cdi.Outcome{Err: err}
	}
	if j.vol.Mode == cdi.Filesystem {
		err := sizeImage(j.vol.Path, size, j.t.Preallocate, j.t.FileMode, true)
		return cdi.Outcome{Err: err, PreallocationApplied: j.t.Preallocate, Details: details}
	}
	if !j.t.Preallocate {
		return cdi.Outcome{Details: details}
	}
	err := zeroDevice(j.vol.Path, size)
	return cdi.Outcome{Err: err, PreallocationApplied: true, Details: details}
}

// zeroDevice writes zeros over a block device's first size bytes, as
// CDI's dd does, to the byte: the whole sectors by the cheapest call the
// device has (the kernel falls back to writing them), a tail short of a
// sector written.
func zeroDevice(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_EXCL, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	whole := size &^ 511 // fallocate on a device takes whole sectors
	if whole > 0 {
		if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, 0, whole); err != nil {
			return fmt.Errorf("write zeros over %s: %w", path, err)
		}
	}
	if tail := size - whole; tail > 0 {
		if _, err := f.WriteAt(make([]byte, tail), whole); err != nil {
			return fmt.Errorf("write zeros over %s at %d: %w", path, whole, err)
		}
	}
	return f.Sync()
}
