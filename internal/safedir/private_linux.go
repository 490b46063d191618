package safedir

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OwnerError says a file or folder is not one this process's user may
// trust: a symlink, another user's, or writable by others.
type OwnerError struct {
	Path string
	Why  string
}

func (e *OwnerError) Error() string { return e.Path + ": " + e.Why }

// OpenPrivate opens the folder at path, which must be this user's alone;
// it is made (0700) when missing, its parent must exist. The folder is
// checked on the opened descriptor (what Lstat of path would say, without
// the race between the look and the open): not a symlink (O_NOFOLLOW),
// a folder, owned by this process's effective user, and not writable by
// group or others. Anything else is an *OwnerError: someone else made
// the folder or can put files in it, such as a symlink named like a file
// ringcp writes.
func OpenPrivate(path string) (*Dir, error) {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	d, err := open(path, unix.O_NOFOLLOW)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil, &OwnerError{Path: path, Why: "is not a folder but a symlink or a file (someone else may have made it)"}
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(d.fd(), &st); err != nil {
		d.Close()
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := checkOwn(path, &st, unix.S_IFDIR); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// checkOwn holds st, of path, to be of type typ, this user's, and not
// writable by group or others.
func checkOwn(path string, st *unix.Stat_t, typ uint32) error {
	me := uint32(os.Geteuid())
	switch {
	case st.Mode&unix.S_IFMT != typ && typ == unix.S_IFDIR:
		return &OwnerError{Path: path, Why: "is not a folder"}
	case st.Mode&unix.S_IFMT != typ:
		return &OwnerError{Path: path, Why: "is not a regular file"}
	case st.Uid != me:
		return &OwnerError{Path: path, Why: fmt.Sprintf("belongs to uid %d, not to this user (uid %d): another user may have made it", st.Uid, me)}
	case st.Mode&0o022 != 0:
		return &OwnerError{Path: path, Why: fmt.Sprintf("may be written by others (mode %04o)", st.Mode&0o7777)}
	}
	return nil
}
