package e2e

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// A block device SRC changed between a SIGINT and the rerun. After a
// SIGINT DST's marks are as its state recorded them, so the rerun reads
// nothing of the part already copied: only SRC's own marks can tell that
// SRC changed there. A loop device over another block device keeps none
// (no file behind it), and a write into a loop device's page cache
// reaches its backing file, and changes its marks, only at writeback.
// Either way the rerun exited 0 with a DST that was not SRC (issue 20's
// second review).

// rewriteSrc writes n random bytes at off of dev; with sync the write
// reaches the device (O_DIRECT and an fsync), else it stays dirty in the
// device's page cache, as a plain dd leaves it.
func rewriteSrc(t *testing.T, dev string, off, n int64, sync bool) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	rand.Read(b)
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeBlockSrcChangedAfterStop: SRC a loop device over a loop
// device (no marks), rewritten at its start through the lower device
// after a SIGINT; and SRC a loop device over a file, rewritten at its
// start with a buffered write that is still dirty when the rerun starts
// (another opener holds the device, so closing the writer does not write
// it back).
// The rerun must refuse (exit 2), never exit 0 with DST unlike SRC. Both
// engines.
func TestResumeBlockSrcChangedAfterStop(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng+"/loop-over-loop", func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "src.img")
			randomFile(t, file, resumeSize, 61)
			lower := blocktest.Loop(t, file)
			src := blocktest.Loop(t, lower)
			dst := filepath.Join(dir, "dst.img")
			state := copier.StatePath(dst)

			stoppedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			rewriteSrc(t, lower, 4096, 4096, true)
			r := cli(t, "-v", "--resume", "--engine", eng, src, dst)
			r.want(t, 2, "differs from SRC at offset 4096")
		})
		t.Run(eng+"/dirty-loop", func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "src.img")
			randomFile(t, file, resumeSize, 62)
			src := blocktest.Loop(t, file)
			dst := filepath.Join(dir, "dst.img")
			state := copier.StatePath(dst)

			stoppedAfter(t, state, 8<<20, "--engine", eng, src, dst)
			// Another opener (a VM, a mount) keeps the device open: the
			// last close would write the page cache back.
			holder, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			rewriteSrc(t, src, 4096, 4096, false)
			r := cli(t, "-v", "--resume", "--engine", eng, src, dst)
			r.want(t, 2, "changed since the copy that the resume state records")
		})
	}
}
