package copier

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// newMethod is how a new DST file comes to exist. Either way it is never
// seen under DST's name before it is complete and synced.
type newMethod uint8

const (
	newNone newMethod = iota // DST exists
	// newUnnamed: an O_TMPFILE inode in DST's folder, given DST's name by
	// linkat at the end. A crash leaves nothing behind.
	newUnnamed
	// newTemp: a file under a hidden temporary name in DST's folder
	// (tempName), locked with flock while the copy runs, renamed to DST
	// at the end and removed on failure. A kill -9 leaves it behind; the
	// next run onto the same DST finds it unlocked and removes it.
	newTemp
	// newPartial: a resumable copy's new DST, under the visible name
	// DST.ringcp-partial (resume_linux.go), flocked while written, renamed
	// to DST at the end; kept after a failure or a kill, for the next run
	// to continue.
	newPartial
)

func (m newMethod) String() string {
	switch m {
	case newUnnamed:
		return "an unnamed O_TMPFILE inode, linked as DST when complete"
	case newTemp:
		return "a hidden temporary file, renamed to DST when complete"
	case newPartial:
		return "a partial file (DST.ringcp-partial), renamed to DST when complete"
	}
	return "existing"
}

// tmpfileFilesystems are where O_TMPFILE and linkat are known to work
// together: local filesystems whose tmpfile inodes can be linked. FUSE
// may accept O_TMPFILE and then fail to link or reopen the inode, NFS and
// SMB have no O_TMPFILE at all; they get a temporary name.
var tmpfileFilesystems = map[int64]bool{
	0xef53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683e: true, // btrfs
	0x01021994: true, // tmpfs
	0xf2f52010: true, // f2fs
	0xca451a4e: true, // bcachefs
}

// chooseNewMethod decides how a new DST is created, given the O_TMPFILE
// probe of its folder (nil when that open worked).
func (f *fileEnd) chooseNewMethod(tmp *os.File, tmpErr error) {
	f.creation, f.creationWhy = newTemp, ""
	var fs unix.Statfs_t
	switch {
	case tmpErr != nil:
		f.creationWhy = fmt.Sprintf("no O_TMPFILE here (%v)", tmpErr)
	case unix.Fstatfs(int(tmp.Fd()), &fs) != nil || !tmpfileFilesystems[int64(fs.Type)]:
		f.creationWhy = "O_TMPFILE is only trusted on ext4, xfs, btrfs, tmpfs, f2fs and bcachefs"
	case !canLinkUnnamed():
		f.creationWhy = "an unnamed inode can't be linked here: no /proc/self/fd and no CAP_DAC_READ_SEARCH"
	default:
		f.creation = newUnnamed
	}
}

// canLinkUnnamed says whether linkUnnamed can work: linkat with
// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH, the /proc route needs /proc.
func canLinkUnnamed() bool {
	if hasCapability(unix.CAP_DAC_READ_SEARCH) {
		return true
	}
	_, err := os.Stat("/proc/self/fd")
	return err == nil
}

// hasCapability reports whether capability c is in this thread's
// effective set.
func hasCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// create makes the new DST, unnamed or under its temporary name.
func (d *dest) create(p *Plan, flag int) error {
	path := d.end.ep.path
	d.creation = d.end.creation
	dir, err := os.Open(dirOf(path))
	if err != nil {
		return err
	}
	d.dir = dir
	if d.creation == newUnnamed {
		f, err := openAs(dirOf(path), path, flag|unix.O_TMPFILE, 0o644)
		d.f = f
		return err
	}
	if d.creation == newPartial {
		return d.createPartial(p, flag)
	}
	d.tmp = tempName(path)
	f, err := createTemp(d.tmp, path, flag&unix.O_ACCMODE)
	if err != nil {
		return err
	}
	d.f = f
	if d.direct {
		// Created buffered, then switched: an O_DIRECT create that the
		// filesystem refuses would leave the file behind. Where it is
		// refused, the copy stays buffered on this side.
		d.direct = setFlag(f, unix.O_DIRECT, true) == nil
	}
	return nil
}

// tempName is the hidden name a new DST is written under: ".NAME.ringcp-tmp"
// in DST's folder, or a hash of NAME where that would be too long.
func tempName(path string) string {
	dir, base := filepath.Split(path)
	name := "." + base + ".ringcp-tmp"
	if len(name) > 255 {
		h := fnv.New64a()
		h.Write([]byte(base))
		name = ".ringcp-" + strconv.FormatUint(h.Sum64(), 16) + ".tmp"
	}
	return filepath.Join(dir, name)
}

// createTemp creates the temporary file with O_EXCL and locks it; acc is
// O_WRONLY, or O_RDWR to read it back. One left behind by a killed run
// (unlocked) is removed first; one that is locked belongs to a ringcp
// copying to the same DST now: refused.
func createTemp(tmp, dst string, acc int) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := openAs(tmp, dst, acc|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
		if err == nil {
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil && !errors.Is(err, unix.ENOLCK) {
				f.Close()
				return nil, refuseErr(KindCheckFailed, dst, "cannot lock the temporary file "+tmp, err).on("Dst")
			}
			// Between the create and the lock, another ringcp may have
			// taken the file for a leftover, removed it and made its own:
			// then the name is no longer ours.
			if !stillNamed(f, tmp) {
				f.Close()
				return nil, refuse(KindLocked, dst, "another ringcp is creating DST now (it took over "+tmp+")").on("Dst")
			}
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) || attempt > 0 {
			return nil, err
		}
		if err := removeLeftover(tmp, dst); err != nil {
			return nil, err
		}
	}
}

// removeLeftover removes a temporary file that no running ringcp holds.
func removeLeftover(tmp, dst string) error {
	f, err := os.OpenFile(tmp, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return refuseErr(KindInUse, dst, "a temporary file "+tmp+" is in the way", err).on("Dst")
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return refuse(KindInUse, dst, tmp+" is in the way and is not a regular file").on("Dst")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return refuse(KindLocked, dst, "another ringcp is creating DST now (it holds "+tmp+")").on("Dst")
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return refuseErr(KindPermission, dst, "cannot remove the leftover "+tmp, err).on("Dst")
	}
	return nil
}

// name gives the complete new DST its name. A DST that appeared meanwhile
// is never replaced, and only this copy's own temporary file is renamed.
func (d *dest) name(path string) error {
	if d.creation == newUnnamed {
		return linkUnnamed(d.f, path)
	}
	if !stillNamed(d.f, d.tmp) {
		return fmt.Errorf("%s: the temporary file %s was replaced while copying; the copy is discarded", path, d.tmp)
	}
	return renameNoReplace(d.tmp, path)
}

// stillNamed says path still names the file f.
func stillNamed(f *os.File, path string) bool {
	var mine, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &mine) != nil || unix.Lstat(path, &now) != nil {
		return false
	}
	return mine.Dev == now.Dev && mine.Ino == now.Ino
}

// linkUnnamed links an O_TMPFILE inode as path: by descriptor where
// CAP_DAC_READ_SEARCH allows (no /proc needed), else through
// /proc/self/fd.
func linkUnnamed(f *os.File, path string) error {
	err := unix.Linkat(int(f.Fd()), "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) {
		proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		err = unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	}
	return nameError(path, err)
}

// renameNoReplace renames tmp to path unless path exists: renameat2
// RENAME_NOREPLACE; where the filesystem lacks it (EINVAL: NFS, some
// FUSE servers), a hard link, which fails on an existing name too, then
// unlink of the temporary name.
func renameNoReplace(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return nameError(path, err)
	}
	if err := nameError(path, unix.Link(tmp, path)); err != nil {
		return err
	}
	// DST is complete and named: a temporary name that cannot be removed
	// now is a second link to it, which the next run onto DST finds
	// unlocked and removes.
	os.Remove(tmp)
	return nil
}

func nameError(path string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%s: appeared while copying; the copy was not given its name and is discarded: %w", path, err)
	}
	return &os.PathError{Op: "name", Path: path, Err: err}
}

// discard removes a new DST that did not complete, and reports whether
// nothing of it is left. An unnamed inode vanishes when closed; a
// temporary file is removed if its name still points at it.
func (d *dest) discard() bool {
	switch d.creation {
	case newUnnamed:
		return true
	case newTemp:
		return removeIfSame(d.f, d.tmp)
	case newPartial:
		// Kept for the next run once a state points at it; before
		// that it holds nothing worth keeping.
		return !d.keepIt && removeIfSame(d.f, d.tmp)
	}
	return false
}

// removeIfSame unlinks path if it still names the file f.
func removeIfSame(f *os.File, path string) bool {
	return stillNamed(f, path) && os.Remove(path) == nil
}

func dirOf(path string) string { return filepath.Dir(path) }
