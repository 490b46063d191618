package copier_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// TestSrcChangedResumable: a resumable copy (Options.Resume) whose SRC
// is written while it is read, run to its end or stopped after the
// write, kept its state (and a new DST's partial file) and said "run
// the same command again", which the next run then refused: SRC no
// longer matches the state. What it copied is a mix, nothing a resume
// can build on: the state goes, and a new DST's partial with it (an
// existing DST is said to be mixed), so that the same command run again
// starts over and completes.
func TestSrcChangedResumable(t *testing.T) {
	for _, c := range []struct {
		name            string
		existing, abort bool
	}{{"new/ended", false, false}, {"new/stopped", false, true}, {"existing/stopped", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeFile(t, src, randomBytes(8<<20, 64))
			if c.existing {
				writeFile(t, dst, make([]byte, 8<<20))
			}
			rep, err := resumableWhileWritten(t, src, dst, c.abort)
			if err == nil {
				t.Fatal("the copy succeeded")
			}
			want := map[bool]copier.DstState{false: copier.DstDiscarded, true: copier.DstMixed}[c.existing]
			if rep.DstState != want || rep.StatePath != "" {
				t.Errorf("DST %v, state %q (%v): want %v and no state", rep.DstState, rep.StatePath, err, want)
			}
			mustNotExist(t, dst+".ringcp-state")
			mustNotExist(t, dst+".ringcp-partial")
			if !c.existing {
				wantUnnamed(t, dst)
			}
			again, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Resume: true})
			if err != nil || again.Resumed != 0 {
				t.Fatalf("the same command again: %v (resumed %d); want a copy from the start", err, again.Resumed)
			}
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			compareFile(t, dst, b)
		})
	}
}

// resumableWhileWritten copies src to dst with Options.Resume, slowed,
// writes src behind the read position once 2 MiB are copied, and then,
// when abort, stops the copy.
func resumableWhileWritten(t *testing.T, src, dst string, abort bool) (copier.Report, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := false
	o := copier.Options{Src: src, Dst: dst, Resume: true, BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 8 << 20,
		ProgressInterval: 10 * time.Millisecond, SyncEvery: 10 * time.Millisecond}
	o.OnProgress = func(s copier.Status) {
		if done || s.BytesDone < 2<<20 || s.BytesDone >= s.BytesTotal {
			return
		}
		done = true
		writeAt(t, src, randomBytes(4096, 65), 0)
		if abort {
			time.Sleep(200 * time.Millisecond) // a block or two recorded after the write
			cancel()
		}
	}
	rep, err := copier.Copy(ctx, o)
	if !done {
		t.Fatalf("the copy ended before SRC was written (%v)", err)
	}
	return rep, err
}
