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
		name, hint string
		w          io.Writer
	}{{"stdout", "redirect stdout elsewhere, or give DST - to write the copy there", stdout}, {"stderr", "redirect stderr elsewhere", stderr}} {
		if isStream(dst, s.w) {
			return &copier.RefusedError{Kind: copier.KindBadInput, Path: dst, Field: "Dst", Reason: fmt.Sprintf(
				"DST is ringcp's own %s: the copy and ringcp's output would overwrite each other (%s)", s.name, s.hint)}
		}
	}
	return nil
}

// jsonStream is where the --json object of a copy to dst goes: stdout,
// unless stdout carries the copy (DST -) or is DST (/dev/stdout, a file
// stdout is redirected to), when it goes to stderr, on a line of its own.
// Every outcome prints its object; none lands in DST.
func jsonStream(dst string, stdout, stderr io.Writer) io.Writer {
	if dst == "-" || isStream(dst, stdout) {
		return stderr
	}
	return stdout
}

// isStream says whether path is the file or block device w writes to.
func isStream(path string, w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
		// A character device is no file the copy and the messages would
		// overwrite each other in: /dev/null behind >/dev/null takes both
		// and keeps neither (a read test in a cron job), and copier
		// refuses the others (a terminal) with their own reason.
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
