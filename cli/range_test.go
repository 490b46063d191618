package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDstOffsetZeroKeepsDst: --dst-offset given, even as 0, places the
// copy inside DST: a 1 MiB part written at the start of a 10 MiB disk
// image leaves a 10 MiB image, as --help promises. --length 0 copies
// nothing and changes nothing.
func TestDstOffsetZeroKeepsDst(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "part"), filepath.Join(dir, "disk")
	part := randomFile(t, src, 1<<20, 71)
	disk := randomFile(t, dst, 10<<20, 72)
	cli(t, "--dst-offset", "0", src, dst).want(t, exitOK)
	want := append(append([]byte{}, part...), disk[1<<20:]...)
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("DST is %d bytes (%v): want the 10 MiB image with its first MiB replaced", len(got), err)
	}
	cli(t, "--length", "0", "--dst-offset", "4096", src, dst).want(t, exitOK)
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, want) {
		t.Fatal("--length 0 changed DST")
	}
}
