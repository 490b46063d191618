package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// TestVerifyLyingBlockStatus: an NBD SRC whose block status says a data
// range reads as zeros (nbdkit's extentlist filter over a file: the map
// calls 4 MiB to 12 MiB "hole,zero", though they hold data). The copy does
// not read what the map calls zeros, and --verify's digests record zeros
// there, so a read-back of DST alone passed (issue 20: exit 0, DST with
// zeros where SRC has data). --verify reads SRC's claimed zeros too: exit
// 3, naming the range and why. Without the lie the copy verifies, and
// says how much of SRC's zeros it read.
func TestVerifyLyingBlockStatus(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	img := filepath.Join(dir, "src.img")
	data := randomFile(t, img, 16<<20, 31)
	lie, truth := filepath.Join(dir, "lie"), filepath.Join(dir, "truth")
	for path, list := range map[string]string{lie: "0 4M\n4M 8M hole,zero\n12M 4M\n", truth: "0 16M\n"} {
		if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lying := nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "--filter=extentlist", "file", img, "extentlist="+lie).URI
	dst := filepath.Join(dir, "dst")
	r := cli(t, "--verify", lying, dst)
	r.want(t, exitMismatch, "differs from SRC at offset 4194304", "2 of 4 blocks", "in 2 of them SRC's NBD block status said zeros")
	mustNotExist(t, dst)

	honest := nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "--filter=extentlist", "file", img, "extentlist="+truth).URI
	r = cli(t, "--verify", "--sparse", "always", honest, dst)
	r.want(t, exitOK)
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Error("DST differs from SRC")
	}
}
