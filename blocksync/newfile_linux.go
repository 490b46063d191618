package blocksync

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// fresh is a DST the sync creates: written under a hidden temporary name
// in DST's folder, so that no one takes a half-written file for DST;
// Commit renames it to DST without replacing anything that appeared
// there meanwhile. A sync killed with SIGKILL leaves the temporary file
// (".NAME.ringcp-sync-XXXXXXXX") behind.
type fresh struct {
	temp  string
	named bool
}

// createTarget makes a new, empty DST file under a temporary name.
func createTarget(path string) (*File, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, refuse(KindNotFound, path, "DST's folder does not exist", err)
	}
	var r [4]byte
	rand.Read(r[:])
	temp := filepath.Join(dir, "."+name+".ringcp-sync-"+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(temp, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, openRefusal(path, "DST", err)
	}
	e := &File{f: f, path: path, fresh: &fresh{temp: temp}}
	if err := e.measure(); err != nil {
		f.Close()
		os.Remove(temp)
		return nil, err
	}
	return e, nil
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
