package copier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ringcp/ringcp/internal/safedir"
	"golang.org/x/sys/unix"
)

// The resume state file (Options.Resume) says which part of a copy is on
// DST and flushed, what SRC and DST were (identity_linux.go), and what
// DST's marks were when that was recorded, so that a run of the same copy
// after a kill, a crash or a power loss continues it instead of starting
// over, and refuses to when either side changed.
//
// It is JSON, rewritten as a whole after every barrier: written to
// STATE.tmp (created anew, never through a symbolic link), fsync'ed,
// renamed over STATE, and the folder fsync'ed, so a crash leaves the old
// state or the new one, never a torn one. It only ever records a prefix
// that a completed fdatasync of DST covers (engine.Observer.Durable), so
// it may lag what DST holds, never lead.
//
// A rerun trusts the file as much as DST itself: it must be a regular
// file of this user's that nobody else may write (0600 when ringcp makes
// it), and it carries a digest of its own content, so that a truncated or
// hand-edited state is refused rather than believed.

// digest is the record's own SHA-256, Sum left out.
func (st resumeState) digest() string {
	st.Sum = ""
	b, _ := json.Marshal(st)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// loadState reads the state file at path: nil when there is none.
func loadState(path string) (*resumeState, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, unix.ELOOP):
		return nil, refuse(KindBadInput, path, "is a symbolic link: a resume state is a file ringcp wrote there itself (remove the link)").on("StatePath")
	case err != nil:
		return nil, refuseErr(KindCheckFailed, path, "cannot read the resume state", err).on("StatePath")
	}
	defer f.Close()
	if err := checkStateFile(f, path); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateSize+1))
	if err != nil {
		return nil, refuseErr(KindCheckFailed, path, "cannot read the resume state", err).on("StatePath")
	}
	var st resumeState
	if err := json.Unmarshal(b, &st); err != nil || len(b) > maxStateSize || st.Format == "" {
		return nil, refuse(KindBadInput, path, "is not a ringcp resume state, or is cut short (remove it to start the copy over)").on("StatePath")
	}
	if st.Format != stateFormat {
		return nil, refuse(KindBadInput, path, fmt.Sprintf("is a resume state of format %q, written by another ringcp version; this one reads %q only (remove it to start the copy over)", st.Format, stateFormat)).on("StatePath")
	}
	if st.Sum != st.digest() {
		return nil, refuse(KindBadInput, path, "is a resume state whose content does not match its digest: it was edited or damaged, and is not believed (remove it to start the copy over)").on("StatePath")
	}
	return &st, nil
}

// checkStateFile refuses a state that is not a regular file of this
// user's, or that others may write: whoever can write it can make a rerun
// skip any part of the copy.
func checkStateFile(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return refuseErr(KindCheckFailed, path, "cannot stat the resume state", err).on("StatePath")
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return refuse(KindBadInput, path, "is not a regular file: it cannot be a resume state").on("StatePath")
	case int(st.Uid) != os.Geteuid():
		return refuse(KindPermission, path, fmt.Sprintf("belongs to uid %d, not to this user (uid %d): a resume state is only believed from the user who runs the copy", st.Uid, os.Geteuid())).on("StatePath")
	case st.Mode&0o022 != 0:
		return refuse(KindPermission, path, fmt.Sprintf("may be written by others (mode %#o): a resume state is only believed when only its owner can write it", st.Mode&0o777)).on("StatePath")
	}
	return nil
}

// writeState replaces the state file atomically and durably, through its
// folder's descriptor: STATE.tmp made with O_EXCL|O_NOFOLLOW, 0600 (never
// a file planted under that name), fsync'ed, renamed over STATE, the
// folder fsync'ed.
func writeState(path string, st *resumeState) error {
	st.Updated = time.Now().UTC().Format(time.RFC3339)
	st.Sum = st.digest()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir, err := safedir.Open(dirOf(path))
	if err == nil {
		defer dir.Close()
		name := filepath.Base(path)
		err = dir.Replace(name, name+".tmp", append(b, '\n'), 0o600, true)
	}
	if err == nil {
		err = syncDir(dir.File())
	}
	if err != nil {
		return fmt.Errorf("write the resume state %s: %w", path, err)
	}
	return nil
}

// removeState removes the state file once the copy it records is
// complete, and makes that durable.
func removeState(path string) error {
	dir, err := safedir.Open(dirOf(path))
	if err == nil {
		defer dir.Close()
		err = dir.Remove(filepath.Base(path))
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = syncDir(dir.File())
	}
	if err != nil {
		return fmt.Errorf("remove the resume state %s: %w", path, err)
	}
	return nil
}

func stamp(ns int64) string { return time.Unix(0, ns).Format("2006-01-02 15:04:05.000000000") }
