package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/spf13/pflag"
)

// demoSize: big enough that queues and block size matter, small enough for
// any machine's temp dir.
const demoSize = 1 << 30

const demoUsage = `Usage: ringcp demo [--size SIZE] [--dir DIR]

Writes an image of random data in a new temporary folder, copies it with
each engine (io_uring, or the pool where io_uring is off; then the pool),
checks each copy byte for byte, and removes them. Exit 0 when both copies
are exact, 3 when one differs.

Flags:
`

// runDemo is the main job on a built-in default: a random image in a temp
// dir, copied with io_uring and with the pool, each copy checked byte for
// byte, then removed.
func runDemo(args []string, stdout, stderr io.Writer) error {
	err := demo(args, stdout, stderr)
	if err != nil && !errors.Is(err, errHelp) {
		fmt.Fprintf(stderr, "ringcp demo: %s\n", message(err))
		return &reported{err}
	}
	return err
}

// demoFlags are demo's flags: the image's size and folder, and --help.
func demoFlags() (fs *pflag.FlagSet, size *int64, dir *string, help *bool) {
	size = new(int64)
	*size = demoSize
	fs = newFlagSet("ringcp demo")
	fs.Var(sizeValue[int64]{p: size}, "size", "size of the demo image")
	dir = fs.String("dir", "", "where to make the image (default: a new temp dir)")
	help = fs.BoolP("help", "h", false, "show this help")
	return fs, size, dir, help
}

func demo(args []string, stdout, stderr io.Writer) error {
	fs, sizeFlag, dirFlag, help := demoFlags()
	if err := fs.Parse(args); err != nil {
		return &usageError{err}
	}
	size := *sizeFlag
	if *help {
		fmt.Fprint(stdout, demoUsage+flagHelp(fs))
		return errHelp
	}
	if fs.NArg() != 0 {
		return usagef("unexpected operands %v", fs.Args())
	}
	dir, err := os.MkdirTemp(*dirFlag, "ringcp-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "image.raw")
	fmt.Fprintf(stdout, "demo: writing %s of random data to %s\n", units.Format(size), src)
	if err := writeRandom(src, size); err != nil {
		return err
	}
	// auto: io_uring, or the pool (with the reason) where io_uring is off.
	var errs []error
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		if err := demoCopy(src, filepath.Join(dir, "copy-"+string(eng)+".raw"), eng, stdout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func demoCopy(src, dst string, eng copier.EngineChoice, stdout io.Writer) error {
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng})
	if err != nil {
		return err
	}
	printSummary(stdout, rep, "copied")
	same, err := sameContent(src, dst)
	switch {
	case err != nil:
		return fmt.Errorf("verify: %w", err)
	case !same:
		return &mismatchError{src: src, dst: dst}
	}
	fmt.Fprintf(stdout, "demo: %s copy verified byte for byte\n", rep.Engine)
	os.Remove(dst) // free the space before the next copy
	return nil
}

// writeRandom makes the demo image: random data, so that nothing along the
// way can compress or dedupe it, written and synced once.
func writeRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rng := rand.NewChaCha8([32]byte{'r', 'i', 'n', 'g', 'c', 'p'})
	if _, err := io.CopyN(f, rng, size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sameContent compares two files byte for byte.
func sameContent(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	const chunk = 4 << 20
	ba, bb := make([]byte, chunk), make([]byte, chunk)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}
