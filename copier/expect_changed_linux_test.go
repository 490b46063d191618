package copier_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/extents"
)

// TestExpectChecksumOfChangedRanges: --expect-checksum is the digest of
// all of SRC. A copy of some ranges only (an extent list) never reads all
// of it, so the digest cannot be checked: refused before DST is touched,
// not failed after the ranges were written. A sync reads all of SRC: the
// digest is checked, a right one lets it complete, a wrong one fails it.
func TestExpectChecksumOfChangedRanges(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomBytes(1<<20+4096, 41)
	writeFile(t, src, data)
	old := bytes.Repeat([]byte{0xAA}, len(data))
	sum := fmt.Sprintf("sha256:%x", sha256.Sum256(data))

	writeFile(t, dst, old)
	_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, ExpectChecksum: sum,
		Extents: []extents.Entry{{Range: extents.Range{Off: 0, Len: 64 << 10}, Line: 1}}, ExtentsSet: true})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("an extent list with --expect-checksum: got %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, old) {
		t.Error("DST was changed")
	}

	for _, expect := range []string{sum, "sha256:" + fmt.Sprintf("%064x", 1)} {
		writeFile(t, dst, old)
		_, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, ExpectChecksum: expect, Sync: true})
		switch {
		case expect == sum && err != nil:
			t.Errorf("a sync with the right digest: %v", err)
		case expect == sum:
			compareFile(t, dst, data)
		case err == nil:
			t.Error("a sync with a wrong digest succeeded")
		}
	}
}
