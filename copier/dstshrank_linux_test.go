package copier_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestDstShrankBetweenPrepareAndRun: with the keep size policy (a range
// into an existing file), Run gives DST the range's end as its size only
// when that end lies past DST's size as Prepare measured it. If DST was
// cut shorter between Prepare and Run (Run checks that DST is the same
// file, not that it kept its size), and the range ends in zeros, which
// are punched with KEEP_SIZE rather than written, DST ends before the
// range does: the last MiB of the copy is not in DST at all (a read
// there meets end of file), yet Run reports a complete copy.
func TestDstShrankBetweenPrepareAndRun(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := append(randomBytes(1<<20, 41), make([]byte, 1<<20)...) // data, then zeros
	writeFile(t, src, data)
	writeFile(t, dst, randomBytes(2<<20, 42))
	p, err := copier.Prepare(copier.Options{Src: src, Dst: dst, DstSize: copier.SizeKeep})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(dst, 1<<20); err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		return // refusing or failing is honest
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) {
		t.Fatalf("Run reported %q, but DST is %d bytes, not the %d of the range", rep.DstState, len(got), len(data))
	}
}
