package copier

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The resume state file (Options.Resume) says which part of a copy is on
// DST and flushed, and what SRC and DST were, so that a run of the same
// copy after a kill, a crash or a power loss continues it instead of
// starting over, and refuses to when either side changed.
//
// It is JSON, rewritten as a whole after every barrier: written to
// STATE.tmp, fsync'ed, renamed over STATE, and the folder fsync'ed, so a
// crash leaves the old state or the new one, never a torn one. It only
// ever records a prefix that a completed fdatasync of DST covers
// (engine.Observer.Durable), so it may lag what DST holds, never lead.

// identityOf describes an endpoint as Prepare found it (or, for a new
// DST, as st says once it is created). A file SRC is pinned by its
// timestamps too: a file rewritten in place keeps its inode.
func identityOf(path string, st *unix.Stat_t, size int64, isSrc bool) identity {
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return identity{Path: path, Kind: "block device", Size: size, Rdev: st.Rdev}
	}
	id := identity{Path: path, Kind: "file", Dev: st.Dev, Ino: st.Ino}
	if isSrc {
		id.Size, id.Mtime, id.Ctime = st.Size, st.Mtim.Nano(), st.Ctim.Nano()
	}
	return id
}

// byName: the end is known by its name (a URI) and size alone, as an NBD
// export is: nothing else a client sees of it stays the same.
func (rec identity) byName() bool {
	return rec.Dev == 0 && rec.Ino == 0 && rec.Rdev == 0 && rec.Kind != "file"
}

// differs says what changed from the recorded identity rec to now, or "".
func (rec identity) differs(now identity) string {
	switch {
	case rec.Kind != now.Kind:
		return fmt.Sprintf("it was a %s, it is a %s now", rec.Kind, now.Kind)
	case rec.byName() && rec.Path != now.Path:
		return fmt.Sprintf("it was the %s %s, this copy's is %s", rec.Kind, rec.Path, now.Path)
	case rec.Kind == "block device" && rec.Rdev != now.Rdev:
		return fmt.Sprintf("it was device %d:%d, it is %d:%d now", unix.Major(rec.Rdev), unix.Minor(rec.Rdev), unix.Major(now.Rdev), unix.Minor(now.Rdev))
	case rec.Dev != now.Dev || rec.Ino != now.Ino:
		return fmt.Sprintf("it is another file now (inode %d on device %#x, was %d on %#x)", now.Ino, now.Dev, rec.Ino, rec.Dev)
	case rec.Size != now.Size:
		return fmt.Sprintf("its size was %d bytes, it is %d now", rec.Size, now.Size)
	case rec.ETag != now.ETag:
		return fmt.Sprintf("its ETag was %s, it is %s now", rec.ETag, now.ETag)
	case rec.Mtime != now.Mtime:
		return fmt.Sprintf("it was modified (mtime %s, was %s)", stamp(now.Mtime), stamp(rec.Mtime))
	case rec.Ctime != now.Ctime:
		return fmt.Sprintf("its inode changed (ctime %s, was %s)", stamp(now.Ctime), stamp(rec.Ctime))
	}
	return ""
}

func stamp(ns int64) string { return time.Unix(0, ns).Format("2006-01-02 15:04:05.000000000") }

// loadState reads the state file at path: nil when there is none.
func loadState(path string) (*resumeState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, refuseErr(KindCheckFailed, path, "cannot read the resume state", err)
	}
	var st resumeState
	if err := json.Unmarshal(b, &st); err != nil || st.Format != stateFormat {
		return nil, refuse(KindBadInput, path, "is not a ringcp resume state (remove it to start the copy over)")
	}
	return &st, nil
}

// writeState replaces the state file atomically and durably.
func writeState(path string, st *resumeState) error {
	st.Updated = time.Now().UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the resume state %s: %w", path, err)
	}
	return syncDirOf(path)
}

// removeState removes the state file once the copy it records is
// complete, and makes that durable.
func removeState(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the resume state %s: %w", path, err)
	}
	return syncDirOf(path)
}

// stateWriter records each barrier's durable prefix (engine.Observer's
// Durable) in the state file. Writing takes two fsyncs, so it runs on a
// goroutine of its own, never on the engine's thread; it writes the
// latest prefix and skips those that came meanwhile.
type stateWriter struct {
	path string
	kick chan struct{}
	done chan struct{}

	mu      sync.Mutex
	st      resumeState // st.Done is what the file says
	latest  int64
	err     error
	stopped bool
}

// start takes what the state file says and starts writing what the
// barriers make durable.
func (w *stateWriter) start(st resumeState) {
	w.st, w.latest = st, st.Done
	w.kick, w.done = make(chan struct{}, 1), make(chan struct{})
	go w.loop()
}

// Durable takes a barrier's durable prefix, counted from the range start.
func (w *stateWriter) Durable(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.kick == nil {
		return
	}
	w.latest = max(w.latest, n)
	select {
	case w.kick <- struct{}{}:
	default: // a write is due already; it takes the latest
	}
}

func (w *stateWriter) Data(int64, []byte) {}
func (w *stateWriter) Hole(int64, int64)  {}

func (w *stateWriter) loop() {
	defer close(w.done)
	for range w.kick {
		w.write()
	}
	w.write()
}

// write records the latest prefix unless the file says it already.
func (w *stateWriter) write() {
	w.mu.Lock()
	n, st := w.latest, w.st
	w.mu.Unlock()
	if n <= st.Done {
		return
	}
	st.Done = n
	err := writeState(w.path, &st)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.st.Done = n
}

// stop writes the last prefix and ends the goroutine; it returns what the
// file says and the first error writing it.
func (w *stateWriter) stop() (int64, error) {
	w.mu.Lock()
	started := w.kick != nil
	if started && !w.stopped {
		close(w.kick)
	}
	w.stopped = true
	w.mu.Unlock()
	if started {
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.Done, w.err
}

// rewind records a smaller prefix than the file says (a verification
// found a bad block in it), after stop.
func (w *stateWriter) rewind(n int64) error {
	w.mu.Lock()
	st := w.st
	w.mu.Unlock()
	st.Done = n
	if err := writeState(w.path, &st); err != nil {
		return err
	}
	w.mu.Lock()
	w.st.Done = n
	w.mu.Unlock()
	return nil
}

// recorded is what the state file says is done.
func (w *stateWriter) recorded() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.Done
}
