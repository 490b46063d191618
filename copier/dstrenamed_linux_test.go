package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestDstRenamedOverAfterPrepare: another file is renamed over DST
// between Prepare and Run, so DST's name points at it when Run opens it.
// Run must refuse without changing that file: DST is checked before it is
// truncated.
func TestDstRenamedOverAfterPrepare(t *testing.T) {
	dir := t.TempDir()
	src, dst, other := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "other")
	writeFile(t, src, noise(1<<20, 21))
	writeFile(t, dst, noise(1<<20, 22))
	precious := noise(3<<20, 23)
	writeFile(t, other, precious)
	p, err := copier.Prepare(copier.Options{Src: src, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, dst); err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	var re *copier.RefusedError
	if !errors.As(err, &re) || rep.DstState != copier.DstUntouched {
		t.Errorf("Run: %v, DST %v; want a refusal with DST untouched", err, rep.DstState)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, precious) {
		t.Fatalf("the file now named DST was changed: %d bytes, was %d", len(got), len(precious))
	}
}
