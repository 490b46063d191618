package copier_test

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestSrcChangedCompressed: a compressed SRC file (read in order through
// the decompressor) written in place behind the copy's read position
// fails the copy as a raw one does, in every format: a new DST is
// discarded. It completed with exit 0 before, DST a mix: the stream's
// file was never watched.
func TestSrcChangedCompressed(t *testing.T) {
	data := randomBytes(8<<20, 63)
	for _, p := range []struct{ tool, ext string }{{"zstd", ".zst"}, {"gzip", ".gz"}, {"xz", ".xz"}} {
		t.Run(p.ext, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"+p.ext), filepath.Join(dir, "dst")
			args := []string{"-c"}
			if p.tool != "gzip" {
				args = []string{"-q", "-c"}
			}
			pack(t, p.tool, append(args, "-1"), data, src)
			// SrcSize: gzip and zstd do not say it, and the write waits
			// for a share of it copied.
			o := copier.Options{Src: src, Dst: dst, SrcSize: int64(len(data))}
			rep, err := srcChangeCopy(t, o, func() {
				writeAt(t, src, []byte("written while it was read"), 0)
			})
			wantSrcChanged(t, err, src)
			if rep.DstState != copier.DstDiscarded {
				t.Errorf("DST %v: want it discarded", rep.DstState)
			}
			wantUnnamed(t, dst)
		})
	}
}
