package untar

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Stats count what Extract made.
type Stats struct {
	Files, Dirs, Symlinks, Links, Fifos int
	Bytes                               int64 // regular files' data written
}

// Options tune Extract.
type Options struct {
	// Logf, when set, hears what GNU tar would warn of (a leading "/"
	// dropped, a global header skipped).
	Logf func(format string, args ...any)
}

// Extract reads the tar stream r and makes its members beneath dir (see
// the package's contract). It stops at ctx's end between reads (close
// r's source to cut a read short). The error names the member.
func Extract(ctx context.Context, r io.Reader, dir string, o Options) (Stats, error) {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stats{}, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(root)
	x := &extractor{root: root, o: o}
	if x.o.Logf == nil {
		x.o.Logf = func(string, ...any) {}
	}
	tail := &zeroTail{r: r}
	tr := tar.NewReader(tail)
	for {
		if err := ctx.Err(); err != nil {
			return x.st, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) && tail.zeros < endMarker {
			// archive/tar takes the input's end where a header would
			// be as the archive's: a cut there would pass.
			return x.st, fmt.Errorf("the archive ends after %d members without its end-of-archive marker: it was cut short", x.members)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x.st, fmt.Errorf("reading the archive after %d members: %w", x.members, err)
		}
		x.members++
		if err := x.member(h, tr); err != nil {
			return x.st, err
		}
	}
	return x.st, x.finishDirs()
}

// extractor is one extraction.
type extractor struct {
	root    int // dir, O_PATH
	o       Options
	st      Stats
	members int
	dirs    []dirMeta // the directories the archive named, set at the end
}

// dirMeta is a directory's mode and time, applied once its members are in.
type dirMeta struct {
	name  string
	mode  uint32
	mtime time.Time
}

// member makes one member.
func (x *extractor) member(h *tar.Header, tr *tar.Reader) error {
	if h.Typeflag == tar.TypeXGlobalHeader {
		x.o.Logf("tar: skipping a global extended header")
		return nil
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return err
	}
	if strings.HasPrefix(h.Name, "/") {
		x.o.Logf("tar: removing leading '/' from member name %q", h.Name)
	}
	if name == "" {
		return nil // the directory itself: the volume's root is left as it is
	}
	parent, base, err := x.parent(name)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse: // the reader gives TypeRegA as TypeReg
		return x.file(parent, base, h, tr)
	case tar.TypeDir:
		return x.mkdir(parent, base, h)
	case tar.TypeSymlink:
		return x.symlink(parent, base, name, h)
	case tar.TypeLink:
		return x.hardlink(parent, base, h)
	case tar.TypeFifo:
		return x.fifo(parent, base, h)
	case tar.TypeChar, tar.TypeBlock:
		return &MemberError{Name: h.Name, Reason: "a device node, which is not extracted"}
	}
	return &MemberError{Name: h.Name, Reason: fmt.Sprintf("of tar type %q, which is not extracted", h.Typeflag)}
}

// wrap names the member and the call in a system call's error.
func wrap(h *tar.Header, op string, err error) error {
	return &MemberError{Name: h.Name, Reason: fmt.Sprintf("%s: %v", op, err)}
}

// mode is what a member's permission bits become: no set-user-ID,
// set-group-ID or sticky bit.
func mode(h *tar.Header) uint32 { return uint32(h.Mode) & 0o777 }

// endMarker is the end of a tar archive: two blocks of zeros.
const endMarker = 2 * 512

// zeroTail counts the zero bytes that end what was read through it: a
// tar reader that stops at the archive's end has just read its end
// marker.
type zeroTail struct {
	r     io.Reader
	zeros int64
}

func (z *zeroTail) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	i := n
	for i > 0 && p[i-1] == 0 {
		i--
	}
	if i == 0 {
		z.zeros += int64(n)
	} else {
		z.zeros = int64(n - i)
	}
	return n, err
}
