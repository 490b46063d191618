package copier_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestCompressedRangeChecked: a range of a compressed SRC (Length) is
// not a success unless the checks over its bytes hold. Incompressible
// data is stored in xz's uncompressed LZMA2 chunks, where a changed byte
// breaks nothing but the block's CRC64 at the block's end: a copy of the
// first 1000 bytes must read on to it. Before, the copy stopped at its
// range, exited 0, and DST held a changed byte.
func TestCompressedRangeChecked(t *testing.T) {
	need(t, "xz")
	data := randomBytes(3<<20, 61)
	c := exec.Command("xz", "-T1", "-0", "-c")
	c.Stdin = bytes.NewReader(data)
	packed, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xz")
	writeFile(t, good, packed)
	bad := bytes.Clone(packed)
	bad[200] ^= 0x01 // in the first chunk's stored bytes
	damaged := filepath.Join(dir, "damaged.xz")
	writeFile(t, damaged, bad)
	dst := filepath.Join(dir, "dst")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: good, Dst: dst, Length: 1000, LengthSet: true}); err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, data[:1000])
	dst2 := filepath.Join(dir, "dst2")
	_, err = copier.Copy(context.Background(), copier.Options{Src: damaged, Dst: dst2, Length: 1000, LengthSet: true})
	if err == nil {
		t.Fatal("a damaged xz SRC's range copied with no error")
	}
	t.Logf("damaged: %v", err)
}
