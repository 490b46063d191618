package qcow2

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/zeros"
)

// crashFile is an image file that stops taking writes after a number of
// operations (writes, syncs, truncations, punches), as a killed process
// or a crashed machine does: what came before is on disk, nothing after.
type crashFile struct {
	f *os.File

	mu   sync.Mutex
	left int // operations still done; < 0: never crash
}

var errCrashed = errors.New("crashed")

func (c *crashFile) op() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return errCrashed
	}
	if c.left > 0 {
		c.left--
	}
	return nil
}

func (c *crashFile) Name() string { return c.f.Name() }
func (c *crashFile) Size() (int64, error) {
	fi, err := c.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
func (c *crashFile) ReadAt(p []byte, off int64) (int, error) { return c.f.ReadAt(p, off) }
func (c *crashFile) WriteAt(p []byte, off int64) (int, error) {
	if err := c.op(); err != nil {
		return 0, err
	}
	return c.f.WriteAt(p, off)
}
func (c *crashFile) Truncate(n int64) error {
	if err := c.op(); err != nil {
		return err
	}
	return c.f.Truncate(n)
}
func (c *crashFile) Sync() error {
	if err := c.op(); err != nil {
		return err
	}
	return c.f.Sync()
}
func (c *crashFile) SyscallConn() (syscall.RawConn, error) {
	if err := c.op(); err != nil {
		return nil, err
	}
	return c.f.SyscallConn()
}

// writeWindows writes src[from:] in windows of chunks of odd sizes, each
// window's chunks from four goroutines in a random order, and a
// checkpoint running beside the next window's writes, as the engine's
// periodic barrier does. It returns the prefix the last checkpoint that
// succeeded vouches for (what completed before it began) and the first
// error.
func writeWindows(w *Writer, src []byte, from int64, seed int64) (int64, error) {
	rng := rand.New(rand.NewSource(seed))
	type chunk struct{ off, n int64 }
	var durable int64 = from
	var firstErr error
	var errMu sync.Mutex
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstErr == nil && err != nil {
			firstErr = err
		}
	}
	var ck sync.WaitGroup
	for off := from; off < int64(len(src)); {
		var window []chunk
		for i := 0; i < 6 && off < int64(len(src)); i++ {
			n := min(int64(len(src))-off, int64(rng.Intn(700<<10)+1))
			window = append(window, chunk{off, n})
			off += n
		}
		rng.Shuffle(len(window), func(i, j int) { window[i], window[j] = window[j], window[i] })
		var wg sync.WaitGroup
		for _, c := range window {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := src[c.off : c.off+c.n]
				if zeros.Is(p) {
					fail(w.WriteZeroes(c.off, c.n))
				} else if _, err := w.WriteAt(p, c.off); err != nil {
					fail(err)
				}
			}()
		}
		ck.Wait() // the previous checkpoint ran beside these writes
		wg.Wait()
		errMu.Lock()
		stop := firstErr != nil
		errMu.Unlock()
		if stop {
			break
		}
		covers := off
		ck.Add(1)
		go func() {
			defer ck.Done()
			if err := w.Checkpoint(); err != nil {
				fail(err)
				return
			}
			errMu.Lock()
			durable = max(durable, covers)
			errMu.Unlock()
		}()
	}
	ck.Wait()
	return durable, firstErr
}

// resumeCase is an image to write, stop and resume.
type resumeCase struct {
	cs      int64
	comp    Compression
	backing bool
	size    int64
}

func (c resumeCase) String() string {
	return fmt.Sprintf("cs=%d/%s/backing=%v/size=%d", c.cs, c.comp, c.backing, c.size)
}

// TestCheckpointResume: a checkpointing Writer stopped after any number
// of file operations (mid-write, mid-checkpoint, between its syncs)
// leaves an image qemu-img check finds clean; Resume from the prefix its
// last checkpoint vouches for, and the rest written, makes an image
// clean to qemu-img check and the same as the source to qemu-img compare,
// qemu-img convert -O raw and this package's reader. It stops and
// resumes twice in a row, so that a resumed image is resumed too.
func TestCheckpointResume(t *testing.T) {
	needQemu(t)
	cases := []resumeCase{
		{cs: 64 << 10, size: 9<<20 + 4097},
		{cs: 64 << 10, comp: CompressZstd, size: 9<<20 + 511},
		{cs: 4 << 10, comp: CompressZlib, size: 5<<20 + 1},
		{cs: 512, size: 3<<20 + 3},
		{cs: 2 << 20, comp: CompressZstd, size: 11<<20 + 4097},
		{cs: 64 << 10, backing: true, size: 6<<20 + 4097},
		{cs: 4 << 10, comp: CompressZstd, backing: true, size: 4<<20 + 511},
		{cs: 64 << 10, size: 1},
		{cs: 64 << 10, size: 0},
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			for _, crashAt := range []int{0, 1, 3, 7, 20, 45, 90} {
				t.Run(fmt.Sprint("crash=", crashAt), func(t *testing.T) { stopAndResume(t, c, crashAt) })
			}
		})
	}
}

func stopAndResume(t *testing.T, c resumeCase, crashAt int) {
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src.raw")
	src := sourceRaw(t, srcPath, c.size, c.size+c.cs+int64(crashAt))
	opt := WriterOptions{Size: c.size, ClusterSize: c.cs, Compression: c.comp, Checkpoints: true}
	want := src
	if c.backing {
		base := filepath.Join(dir, "base.raw")
		baseBytes := sourceRaw(t, base, c.size/2, 7)
		bf, err := os.Open(base)
		if err != nil {
			t.Fatal(err)
		}
		defer bf.Close()
		opt.BackingFile, opt.BackingFormat = "base.raw", FormatRaw
		opt.Backing = io.NewSectionReader(bf, 0, int64(len(baseBytes)))
	}
	img := filepath.Join(dir, "new.qcow2")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cf := &crashFile{f: f, left: -1}
	w, err := Create(cf, opt)
	if err != nil {
		t.Fatal(err)
	}
	var done int64
	for round := range 2 {
		cf.left = crashAt + 40*round
		durable, err := writeWindows(w, src, done, int64(crashAt+round))
		if err == nil {
			err = w.Close()
		}
		if err == nil {
			break // finished before the crash
		}
		if !errors.Is(err, errCrashed) {
			t.Fatalf("round %d: %v", round, err)
		}
		qemuCheck(t, img) // after the crash: an image, and clean
		done = durable / c.cs * c.cs
		t.Logf("round %d crashed; resume from %d of %d", round, done, c.size)
		im := openPath(t, img, Options{Opener: FileOpener})
		got := make([]byte, done)
		if _, err := im.ReadAt(got, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		im.Close()
		sameBytes(t, "the part the checkpoint vouches for", got, want[:done])
		cf.left = -1
		if w, err = Resume(cf, opt, done); err != nil {
			t.Fatalf("round %d: Resume from %d: %v", round, done, err)
		}
		if round == 1 {
			if _, err := writeWindows(w, src, done, 99); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	qemuCheck(t, img)
	padded := append(append([]byte(nil), want...), make([]byte, w.Size()-int64(len(want)))...)
	if !c.backing {
		qemuCompare(t, srcPath, "raw", img, "qcow2")
		sameBytes(t, "qemu-img convert -O raw of the resumed image", rawOf(t, img), padded)
	}
	im := openPath(t, img, Options{Opener: FileOpener})
	defer im.Close()
	checkRead(t, im, padded)
}
