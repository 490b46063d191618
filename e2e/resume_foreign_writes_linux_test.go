package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// A resumed copy refuses a DST written by anyone but the earlier run
// where that run's work lies (the part its state records as copied), and
// takes what needs no trust: what lies past that part is copied again,
// and a DST the copy owns is cut there. After a kill -9 the timestamps
// cannot tell ringcp's last writes from another's: the part is compared
// with SRC. After SIGINT they can: nothing is read unless DST changed.

var resumeEngines = []string{"uring", "pool"}

// waitRecorded waits until the state of the running copy r records at
// least n bytes as done.
func waitRecorded(t *testing.T, r *resumable, state string, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for readState(t, state) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the state %s does not record %d bytes after 60 s", state, n)
		}
		select {
		case <-r.exited:
			t.Fatalf("ringcp exited before its state recorded %d bytes: %v\n%s", n, r.err, r.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// killedAfter runs a resumable copy (startResumable's slow settings) and
// kills it with SIGKILL once its state records n bytes; it returns what
// the state records then.
func killedAfter(t *testing.T, state string, n int64, args ...string) int64 {
	t.Helper()
	r := startResumable(t, state, args...)
	waitRecorded(t, r, state, n)
	r.kill(t)
	return readState(t, state)
}

// stoppedAfter is killedAfter with SIGINT: the copy ends its writes and
// says DST is kept for --resume.
func stoppedAfter(t *testing.T, state string, n int64, args ...string) int64 {
	t.Helper()
	r := startResumable(t, state, args...)
	waitRecorded(t, r, state, n)
	r.signal(t, syscall.SIGINT)
	<-r.exited
	if out := r.output(); !strings.Contains(out, "is kept for --resume") {
		t.Fatalf("an interrupted resumable copy does not say DST is kept:\n%s", out)
	}
	return readState(t, state)
}

// flipByte inverts the byte at off of path (a file or device), written
// as any other program would write it.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // a device's cache is not what O_DIRECT reads
		t.Fatal(err)
	}
}

// putBack writes content into path in place (the same inode) and cuts it
// to that length: a partial file as a kill left it, with newer marks.
func putBack(t *testing.T, path string, content []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(content, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(content))); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRefusesForeignWrites: after a kill -9, the reviewer's 8 MiB
// dd conv=notrunc into the partial DST, and one byte at either end of the
// part the state records as copied, are each refused (exit 2, the offset
// named, nothing written, the state kept); one byte just past that part
// and one past SRC's end are not the copy's concern: the rerun copies
// the first again, cuts the second off, and DST is SRC. Both engines.
func TestResumeRefusesForeignWrites(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
			data := randomFile(t, src, resumeSize, 47)
			partial, state := dst+".ringcp-partial", copier.StatePath(dst)
			done := killedAfter(t, state, 16<<20, "--engine", eng, src, dst)
			from := done / copier.CellSize * copier.CellSize
			t.Logf("killed with %d bytes recorded: the rerun trusts the first %d", done, from)
			leftPartial := fileBytes(t, partial)
			refused := func(t *testing.T, off int64) {
				t.Helper()
				changed, keepState := snap(t, partial), snap(t, state)
				cli(t, "--resume", "--engine", eng, src, dst).want(t, 2,
					fmt.Sprintf("changed since the earlier run: it differs from SRC at offset %d,", off), "remove "+state+" to start over")
				changed.Same(t)
				keepState.Same(t)
				mustNotExist(t, dst)
				putBack(t, partial, leftPartial)
			}

			t.Run("dd", func(t *testing.T) {
				blocktest.Run(t, "dd", "if=/dev/urandom", "of="+partial, "bs=1M", "seek=4", "count=8", "conv=notrunc", "status=none")
				refused(t, 4<<20)
			})
			for _, off := range []int64{0, from - 1} {
				t.Run("byte-"+strconv.FormatInt(off, 10), func(t *testing.T) {
					flipByte(t, partial, off)
					refused(t, off)
				})
			}
			t.Run("past-the-part-and-the-end", func(t *testing.T) {
				flipByte(t, partial, from)
				f, err := os.OpenFile(partial, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteAt([]byte("tail"), resumeSize+100)
				f.Close()
				cli(t, "--resume", "--engine", eng, src, dst).want(t, 0)
				sameFile(t, "DST after the resumed copy", dst, data)
				mustNotExist(t, partial)
				mustNotExist(t, state)
			})
		})
	}
}

// TestResumeAfterStopReadsNothing: after SIGINT the state records DST's
// marks once its writes ended, so the rerun trusts the part copied
// without reading it (-v says nothing of a compare); a byte written
// there since, with touch -d setting mtime back, is still refused
// (ctime moved), and a kill -9's rerun compares. Both engines.
func TestResumeAfterStopReadsNothing(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
			data := randomFile(t, src, resumeSize, 48)
			partial, state := dst+".ringcp-partial", copier.StatePath(dst)

			stoppedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			before, err := os.Stat(partial)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, partial, 5<<20)
			mtime := before.ModTime()
			blocktest.Run(t, "touch", "-m", "-d", fmt.Sprintf("@%d.%09d", mtime.Unix(), mtime.Nanosecond()), partial)
			if after, _ := os.Stat(partial); !after.ModTime().Equal(mtime) {
				t.Fatalf("touch -d did not set mtime back: %v, want %v", after.ModTime(), mtime)
			}
			r := cli(t, "-v", "--resume", "--engine", eng, src, dst)
			r.want(t, 2, "its inode changed (ctime", fmt.Sprintf("it differs from SRC at offset %d,", 5<<20))
			flipByte(t, partial, 5<<20)
			cli(t, "-v", "--resume", "--engine", eng, src, dst).want(t, 0, "is compared with SRC before anything is written")
			sameFile(t, "DST", dst, data)

			os.Remove(dst)
			stoppedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			r = cli(t, "-v", "--resume", "--engine", eng, src, dst)
			r.want(t, 0, "resume: ")
			if strings.Contains(r.stderr, "compared with SRC") {
				t.Errorf("a rerun after SIGINT read the part copied again:\n%s", r.stderr)
			}
			sameFile(t, "DST", dst, data)

			os.Remove(dst)
			killedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			cli(t, "-v", "--resume", "--engine", eng, src, dst).want(t, 0, "DST was written after the state was recorded", "is compared with SRC before anything is written")
			sameFile(t, "DST", dst, data)
		})
	}
}

// TestResumeAfterPlainCopy: a plain copy into DST between a kill -9 and
// the rerun. With the state beside DST, the plain copy removes it (it
// vouches for what that copy overwrites), and the rerun starts over; with
// the state kept elsewhere (--state), the rerun finds DST changed and is
// refused. A new DST made by the plain copy beside the partial file the
// state records is never replaced: refused. Either way DST never ends as
// a mix. Both engines.
func TestResumeAfterPlainCopy(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			src, other, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "other.img"), filepath.Join(dir, "dst.img")
			data := randomFile(t, src, resumeSize, 49)
			randomFile(t, other, resumeSize, 50)
			randomFile(t, dst, resumeSize+3<<20, 51) // an existing, longer DST
			state := copier.StatePath(dst)

			killedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			cli(t, "-v", "--engine", eng, other, dst).want(t, 0, "removed the resume state "+state)
			mustNotExist(t, state)
			cli(t, "-v", "--resume", "--engine", eng, src, dst).want(t, 0, "resume: no state at")
			sameFile(t, "DST", dst, data)

			// A new DST: the plain copy creates DST beside the partial
			// file the state records; the rerun would have to replace it.
			fresh := filepath.Join(dir, "fresh.img")
			killedAfter(t, copier.StatePath(fresh), 8<<20, "--engine", eng, src, fresh)
			cli(t, "--engine", eng, other, fresh).want(t, 0)
			made := snap(t, fresh)
			cli(t, "--resume", "--engine", eng, src, fresh).want(t, 2, "exists now, but the resume state "+copier.StatePath(fresh)+" records a new DST being copied into "+fresh+".ringcp-partial")
			made.Same(t)

			elsewhere := filepath.Join(t.TempDir(), "state")
			killedAfter(t, elsewhere, 8<<20, "--engine", eng, "--state", elsewhere, src, dst)
			cli(t, "--engine", eng, other, dst).want(t, 0)
			keep := snap(t, dst)
			cli(t, "--resume", "--engine", eng, "--state", elsewhere, src, dst).want(t, 2, "changed since the earlier run: it differs from SRC at offset 0,")
			keep.Same(t)
		})
	}
}
