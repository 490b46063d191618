package copier

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
)

// TestSyncResumeNewDst: ringcp sync --resume to a DST that does not
// exist copies into DST.ringcp-partial; killed, its rerun syncs into the
// partial file, which must first take SRC's size. It failed every time
// ("read DST.ringcp-partial at offset N: ended before the range did"):
// the rerun gave the partial SRC's size, then cut it where the resume
// starts, as a copy that owns DST's size does, and the sync read DST
// past its end. No rerun could complete.
func TestSyncResumeNewDst(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := enginetest.RandomBytes(3<<20+5, 71)
	write(t, src, data)
	opts := Options{Src: src, Dst: dst, Resume: true, Sync: true}
	killedAfterBegin(t, opts)
	if _, err := os.Stat(dst + ".ringcp-partial"); err != nil {
		t.Fatalf("the killed sync left no partial file: %v", err)
	}
	run(t, opts)
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Fatalf("DST is %d bytes after the resumed sync, want SRC's %d, byte for byte", len(got), len(data))
	}
}
