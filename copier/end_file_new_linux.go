package copier

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ringcp/ringcp/internal/safedir"
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

// create makes the new DST, unnamed or under its temporary name, through
// a descriptor of DST's folder opened once: every later step on the
// temporary name (lock, check, rename, removal) goes through it, so a
// path component renamed meanwhile cannot send them elsewhere.
func (d *dest) create(p *Plan, flag int) error {
	path := d.end.ep.path
	d.creation = d.end.creation
	dir, err := safedir.Open(dirOf(path))
	if err != nil {
		return err
	}
	d.dir = dir
	if d.creation == newUnnamed {
		f, err := dir.OpenUnnamed(path, flag, 0o644)
		d.f = f
		return err
	}
	if d.creation == newPartial {
		return d.createPartial(p, flag)
	}
	d.tmp = tempName(path)
	f, err := createTemp(dir, d.tmp, path, flag&unix.O_ACCMODE)
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

// createTemp creates the temporary file tmp in dir with O_EXCL|O_NOFOLLOW
// (a symlink or a hard link planted under its name is never opened) and
// locks it; acc is O_WRONLY, or O_RDWR to read it back. One left behind by
// a killed run (unlocked) is removed first; one that is locked belongs to
// a ringcp copying to the same DST now: refused.
func createTemp(dir *safedir.Dir, tmp, dst string, acc int) (*os.File, error) {
	name := filepath.Base(tmp)
	for attempt := 0; ; attempt++ {
		f, err := dir.Create(name, dst, acc, 0o644)
		if err == nil {
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil && !errors.Is(err, unix.ENOLCK) {
				f.Close()
				return nil, refuseErr(KindCheckFailed, dst, "cannot lock the temporary file "+tmp, err).on("Dst")
			}
			// Between the create and the lock, another ringcp may have
			// taken the file for a leftover, removed it and made its own:
			// then the name is no longer ours.
			if !dir.Named(f, name) {
				f.Close()
				return nil, refuse(KindLocked, dst, "another ringcp is creating DST now (it took over "+tmp+")").on("Dst")
			}
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) || attempt > 0 {
			return nil, err
		}
		if err := removeLeftover(dir, tmp, dst); err != nil {
			return nil, err
		}
	}
}

// removeLeftover removes a temporary file that no running ringcp holds.
// A symlink there is never followed, only refused.
func removeLeftover(dir *safedir.Dir, tmp, dst string) error {
	name := filepath.Base(tmp)
	f, err := dir.OpenFile(name, tmp, os.O_RDONLY|unix.O_NONBLOCK)
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
	if err := dir.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return refuseErr(KindPermission, dst, "cannot remove the leftover "+tmp, err).on("Dst")
	}
	return nil
}

// name gives the complete new DST its name, in the folder it was created
// in. A DST that appeared meanwhile is never replaced, and only this
// copy's own temporary file is renamed.
func (d *dest) name(path string) error {
	if d.creation == newUnnamed {
		return nameError(path, d.dir.Link(d.f, filepath.Base(path)))
	}
	if !d.dir.Named(d.f, filepath.Base(d.tmp)) {
		return fmt.Errorf("%s: the temporary file %s was replaced while copying; the copy is discarded", path, d.tmp)
	}
	return nameError(path, d.dir.RenameNoReplace(filepath.Base(d.tmp), filepath.Base(path)))
}

func nameError(path string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%s: appeared while copying; the copy was not given its name and is discarded: %w", path, err)
	}
	return &os.PathError{Op: "name", Path: path, Err: errors.Unwrap(err)}
}

// discard removes a new DST that did not complete, and reports whether
// nothing of it is left. An unnamed inode vanishes when closed; a
// temporary file is removed if its name still points at it.
func (d *dest) discard() bool {
	switch d.creation {
	case newUnnamed:
		return true
	case newTemp:
		return d.removeIfSame()
	case newPartial:
		// Kept for the next run once a state points at it; before
		// that it holds nothing worth keeping.
		return !d.keepIt && d.removeIfSame()
	}
	return false
}

// removeIfSame unlinks the temporary name if it still names DST's file.
func (d *dest) removeIfSame() bool {
	name := filepath.Base(d.tmp)
	return d.dir.Named(d.f, name) && d.dir.Remove(name) == nil
}

func dirOf(path string) string { return filepath.Dir(path) }
