package blocksync

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/guard"
)

// fresh is a DST the sync creates: written under a hidden temporary name
// in DST's folder (".NAME.ringcp-sync"), locked with flock while this
// sync owns it, so that no one takes a half-written file for DST; Commit
// renames it to DST without replacing anything that appeared there
// meanwhile. One left behind by a sync killed with SIGKILL (unlocked) is
// removed by the next sync to the same DST.
type fresh struct {
	temp  string
	named bool
}

// createTarget makes a new, empty DST file under its temporary name. In
// a devtmpfs (/dev) it refuses unless force, as a copy does: a mistyped
// device node would become a file of SRC's size in RAM.
func createTarget(path string, force bool) (*File, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, refuse(KindNotFound, path, "DST's folder does not exist", err)
	}
	if mnt := guard.DevtmpfsMount(dir); mnt != "" && !force {
		return nil, refuse(KindNotFound, path, fmt.Sprintf("no such device; ringcp does not create files in %s, a devtmpfs (--force does)", mnt), nil)
	}
	temp := filepath.Join(dir, tempName(name))
	f, err := createTemp(temp, path)
	if err != nil {
		return nil, err
	}
	e := &File{f: f, path: path, fresh: &fresh{temp: temp}}
	if err := e.measure(); err != nil {
		f.Close()
		os.Remove(temp)
		return nil, err
	}
	return e, nil
}

// tempName is the hidden name a new DST named name is written under, or
// a hash of name where that would be too long for a file name.
func tempName(name string) string {
	if t := "." + name + ".ringcp-sync"; len(t) <= 255 {
		return t
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return ".ringcp-sync-" + strconv.FormatUint(h.Sum64(), 16)
}

// createTemp creates temp (O_EXCL: never through a link planted under
// its name; mode 0600: a disk, whose SRC may be its owner's alone, for
// its owner to open to others) and locks it. One
// that exists unlocked is a killed sync's leftover: removed, then made
// anew. One that is locked belongs to a sync creating the same DST now.
func createTemp(temp, path string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(temp, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			if err := lockTemp(f, temp, path); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) || attempt > 0 {
			return nil, openRefusal(path, "DST", err)
		}
		if err := removeLeftover(temp, path); err != nil {
			return nil, err
		}
	}
}

// lockTemp locks the temporary file just created, and checks that it
// still bears its name: between the create and the lock another sync
// may have taken it for a leftover and removed it.
func lockTemp(f *os.File, temp, path string) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil && !errors.Is(err, unix.ENOLCK) {
		return refuse(KindLocked, path, "another ringcp sync is creating DST now (it holds "+temp+")", err)
	}
	var mine, named unix.Stat_t
	if unix.Fstat(int(f.Fd()), &mine) != nil || unix.Lstat(temp, &named) != nil || mine.Dev != named.Dev || mine.Ino != named.Ino {
		return refuse(KindLocked, path, "another ringcp sync is creating DST now (it took over "+temp+")", nil)
	}
	return nil
}

// removeLeftover removes temp if no sync holds it locked.
func removeLeftover(temp, path string) error {
	f, err := os.OpenFile(temp, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return openRefusal(path, "DST", err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return refuse(KindNotSupported, path, temp+", the temporary name of a new DST, is not a regular file", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil && !errors.Is(err, unix.ENOLCK) {
		return refuse(KindLocked, path, "another ringcp sync is creating DST now (it holds "+temp+")", err)
	}
	if err := os.Remove(temp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return openRefusal(path, "DST", err)
	}
	return nil
}

// Created says whether DST is a new file this sync made (named by
// Commit).
func (e *File) Created() bool { return e.fresh != nil }

// Commit gives a new DST its name, once it is complete and synced:
// rename without replacing (a file that appeared under DST's name
// meanwhile is an error, and stays), then fsync of the folder. For a DST
// that existed it does nothing.
func (e *File) Commit() error {
	if e.fresh == nil || e.fresh.named {
		return nil
	}
	if err := renameNoReplace(e.fresh.temp, e.path); err != nil {
		if errors.Is(err, unix.EEXIST) {
			err = fmt.Errorf("%w: %s appeared while the sync created it; the new copy stays at %s", err, e.path, e.fresh.temp)
			e.fresh.named = true // keep it: it is complete
		}
		return &OpError{Op: "rename", Path: e.fresh.temp, Err: err}
	}
	e.fresh.named = true
	dir, err := os.Open(filepath.Dir(e.path))
	if err != nil {
		return &OpError{Op: "open folder", Path: filepath.Dir(e.path), Err: unwrapPath(err)}
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return &OpError{Op: "fsync folder", Path: filepath.Dir(e.path), Err: unwrapPath(err)}
	}
	return nil
}

// renameNoReplace renames with RENAME_NOREPLACE; a filesystem without it
// (EINVAL) gets link and unlink, which also fails on an existing name.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) {
		return err
	}
	if err := unix.Link(from, to); err != nil {
		return err
	}
	return unix.Unlink(from)
}

// bootID is this boot of this machine, read once.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
