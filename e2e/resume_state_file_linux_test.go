package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
)

// What a rerun holds a state to besides SRC and DST: the range and the
// size policy of the earlier run, the same ends however they are
// spelled, and a state file that only its owner could have written.

// TestResumeSizePolicy: a copy of SRC's whole length into a longer DST
// with --length keeps DST's tail; its rerun without --length would cut
// it, and the reverse would keep the old tail past SRC's end: both are
// refused, and the rerun as the earlier run was completes.
func TestResumeSizePolicy(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
	data := randomFile(t, src, resumeSize, 59)
	old := randomFile(t, dst, resumeSize+3<<20, 60)
	state := copier.StatePath(dst)
	length := strconv.Itoa(resumeSize)

	stoppedAfter(t, state, 8<<20, "--length", length, src, dst)
	keep := snap(t, dst)
	cli(t, "--resume", "--verify", src, dst).want(t, 2, "records a copy that keeps DST's size and what lies outside the range (--dst-offset or --length given, or the keep size policy), this copy gives DST the range's end as its size")
	keep.Same(t)
	cli(t, "--resume", "--verify", "--length", length, src, dst).want(t, 0)
	sameFile(t, "DST", dst, append(append([]byte(nil), data...), old[resumeSize:]...))

	randomFile(t, dst, resumeSize+3<<20, 60)
	stoppedAfter(t, state, 8<<20, src, dst)
	cli(t, "--resume", "--length", length, src, dst).want(t, 2, "records a copy that gives DST the range's end as its size (a whole-file copy), this copy keeps DST's size")
	cli(t, "--resume", "--verify", src, dst).want(t, 0)
	sameFile(t, "DST", dst, data)
}

// TestResumeSpelledOtherwise: SRC and DST given relative to the working
// folder, then absolute: one copy, resumed (the rerun copies only the
// rest).
func TestResumeSpelledOtherwise(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "k2.img")
	data := randomFile(t, src, resumeSize, 61)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	relSrc, err1 := filepath.Rel(wd, src)
	relDst, err2 := filepath.Rel(wd, dst)
	if err1 != nil || err2 != nil || filepath.IsAbs(relDst) {
		t.Fatalf("no relative path to %s from %s", dst, wd)
	}
	done := killedAfter(t, copier.StatePath(dst), 8<<20, relSrc, relDst)

	r := cli(t, "--resume", "--json", "--progress", "none", src, dst)
	r.want(t, 0)
	var rep struct{ Resumed int64 }
	json.Unmarshal([]byte(r.stdout), &rep)
	if want := done / copier.CellSize * copier.CellSize; rep.Resumed != want {
		t.Errorf("the rerun by absolute paths resumed from %d, want %d", rep.Resumed, want)
	}
	sameFile(t, "DST", dst, data)
}

// TestResumeStateTrust: a state file that is a symbolic link, another
// user's, writable by others, cut short or edited by hand is refused
// (exit 2, DST and the state left as they are); so is a temporary state
// file of another user's in the way of a new copy. The state as ringcp
// wrote it then finishes the copy.
func TestResumeStateTrust(t *testing.T) {
	blocktest.NeedRoot(t) // chown
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
	data := randomFile(t, src, resumeSize, 62)
	partial, state := dst+".ringcp-partial", copier.StatePath(dst)
	stoppedAfter(t, state, 8<<20, src, dst)
	good := fileBytes(t, state)
	restore := func() {
		os.Remove(state)
		if err := os.WriteFile(state, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(want string) {
		t.Helper()
		keep := snap(t, partial)
		cli(t, "--resume", src, dst).want(t, 2, want)
		keep.Same(t)
		restore()
	}

	elsewhere := filepath.Join(t.TempDir(), "state")
	os.WriteFile(elsewhere, good, 0o600)
	os.Remove(state)
	os.Symlink(elsewhere, state)
	refused("is a symbolic link")

	os.Chown(state, 65534, 65534)
	refused("belongs to uid 65534")

	os.Chmod(state, 0o666)
	refused("may be written by others (mode 0666)")

	os.WriteFile(state, good[:len(good)/2], 0o600)
	refused("is not a ringcp resume state, or is cut short")

	edited := bytes.Replace(good, []byte(`"done": `), []byte(`"done": 1`), 1)
	os.WriteFile(state, edited, 0o600)
	refused("does not match its digest")

	cli(t, "--resume", src, dst).want(t, 0)
	sameFile(t, "DST", dst, data)

	// A new copy whose temporary state file is someone else's.
	other := filepath.Join(dir, "new.img")
	tmp := copier.StatePath(other) + ".tmp"
	os.WriteFile(tmp, []byte("theirs"), 0o666)
	os.Chown(tmp, 65534, 65534)
	cli(t, "--resume", src, other).want(t, 2, tmp+" is in the way")
	sameFile(t, "the other user's file", tmp, []byte("theirs"))
	mustNotExist(t, other)
	mustNotExist(t, other+".ringcp-partial")
}
