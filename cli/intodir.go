package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// intoDirectory is where a copy to dst lands: dst itself, or, when dst is
// a directory (or a symlink to one), the file named like SRC inside it, as
// cp does (`ringcp disk.img /backup/` writes /backup/disk.img). A SRC
// with no file name of its own (an NBD URI, /, ..) cannot name one: the
// error says to name it. The library keeps refusing a directory DST: a
// program passes the path it means.
func intoDirectory(src, dst string) (string, error) {
	st, err := os.Stat(dst)
	if err != nil || !st.IsDir() {
		return dst, nil // not a directory, or the copy says what it is
	}
	name := filepath.Base(src)
	if strings.Contains(src, "://") || name == "/" || name == "." || name == ".." {
		return "", &copier.RefusedError{Kind: copier.KindBadInput, Path: dst, Field: "Dst", Err: syscall.EISDIR,
			Reason: fmt.Sprintf("DST is a directory, and SRC %s has no file name to give the copy in it: name the file, %s", src, filepath.Join(dst, "NAME"))}
	}
	return filepath.Join(dst, name), nil
}
