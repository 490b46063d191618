package copier_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestNewDstKeepsSrcMode: a new DST takes a local SRC's permission bits,
// as cp does, whether it is created unnamed or under its temporary name,
// and under --resume: a private (0600) disk image copied was readable by
// every user (0644) before.
func TestNewDstKeepsSrcMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, mode := range []os.FileMode{0o600, 0o640, 0o755} {
		for _, resume := range []bool{false, true} {
			dir := t.TempDir()
			src := filepath.Join(dir, "disk.raw")
			if err := os.WriteFile(src, randomBytes(1<<20+511, 3), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(src, mode); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "clone.raw")
			opts := copier.Options{Src: src, Dst: dst, Resume: resume}
			if resume {
				opts.StatePath = filepath.Join(dir, "state")
			}
			if _, err := copier.Copy(context.Background(), opts); err != nil {
				t.Fatalf("mode %o resume %v: %v", mode, resume, err)
			}
			st, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != mode {
				t.Errorf("SRC %o, resume %v: DST made %o", mode, resume, got)
			}
		}
	}
}
