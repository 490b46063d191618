package cli

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// refuseOwnStream refuses a DST that is this command's own stdout or
// stderr (`ringcp --json a.bin /dev/stdout > so.bin`): the copy and the
// report or messages would land in one file, over each other. It compares
// DST with the streams the command writes to, by inode, and by device
// number for block devices (two nodes of one disk). A new DST cannot be
// one. Library callers have no such streams and are not concerned.
func refuseOwnStream(dst string, stdout, stderr io.Writer) error {
	fi, err := os.Stat(dst)
	if err != nil {
		return nil
	}
	for _, s := range []struct {
		name string
		w    io.Writer
	}{{"stdout", stdout}, {"stderr", stderr}} {
		f, ok := s.w.(*os.File)
		if !ok {
			continue
		}
		si, err := f.Stat()
		if err != nil || !(os.SameFile(fi, si) || sameBlockDevice(fi, si)) {
			continue
		}
		return &copier.RefusedError{Kind: copier.KindBadInput, Path: dst, Field: "Dst", Reason: fmt.Sprintf(
			"DST is ringcp's own %s: the copy and ringcp's output would overwrite each other (redirect %s elsewhere)", s.name, s.name)}
	}
	return nil
}

func sameBlockDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Mode()&os.ModeDevice != 0 && a.Mode()&os.ModeCharDevice == 0 &&
		b.Mode()&os.ModeDevice != 0 && b.Mode()&os.ModeCharDevice == 0 && sa.Rdev == sb.Rdev
}
