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
	for _, s := range []struct {
		name string
		w    io.Writer
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if isStream(dst, s.w) {
			return &copier.RefusedError{Kind: copier.KindBadInput, Path: dst, Field: "Dst", Reason: fmt.Sprintf(
				"DST is ringcp's own %s: the copy and ringcp's output would overwrite each other (redirect %s elsewhere)", s.name, s.name)}
		}
	}
	return nil
}

// isStream says whether path is the file or block device w writes to.
// Only a DST that is stdout keeps a refusal's --json object from being
// printed: one on stderr leaves stdout to the report.
func isStream(path string, w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	si, err := f.Stat()
	return err == nil && (os.SameFile(fi, si) || sameBlockDevice(fi, si))
}

func sameBlockDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Mode()&os.ModeDevice != 0 && a.Mode()&os.ModeCharDevice == 0 &&
		b.Mode()&os.ModeDevice != 0 && b.Mode()&os.ModeCharDevice == 0 && sa.Rdev == sb.Rdev
}
