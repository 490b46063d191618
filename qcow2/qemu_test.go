package qcow2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Helpers that run QEMU's own tools (Debian: qemu-utils) to make images
// and to tell what they hold.

func needQemu(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"qemu-img", "qemu-io"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian: qemu-utils): %v", tool, err)
		}
	}
}

// runCmd runs a command and fails the test if it fails; it returns stdout.
func runCmd(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func qemuImg(t testing.TB, args ...string) []byte { t.Helper(); return runCmd(t, "qemu-img", args...) }

// qemuIO runs qemu-io commands on an image of format fmt.
func qemuIO(t testing.TB, format, img string, cmds ...string) {
	t.Helper()
	args := []string{"-f", format}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	runCmd(t, "qemu-io", append(args, img)...)
}

// rawOf is what qemu-img convert -O raw makes of img.
func rawOf(t testing.TB, img string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref.raw")
	qemuImg(t, "convert", "-O", "raw", img, out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// qemuMapEntry is one entry of qemu-img map --output=json.
type qemuMapEntry struct {
	Start, Length int64
	Data, Zero    bool
}

func qemuMap(t testing.TB, img string) []qemuMapEntry {
	t.Helper()
	var m []qemuMapEntry
	if err := json.Unmarshal(qemuImg(t, "map", "--output=json", img), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openPath opens an image file and its chain with FileOpener.
func openPath(t testing.TB, path string, opts Options) *Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if opts.Opener == nil {
		opts.Opener = FileOpener
	}
	im, err := Open(f, opts)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() { im.Close() })
	return im
}

// sourceRaw writes a raw disk of size bytes to path: random data,
// compressible text, written zeros and holes, in stretches of odd lengths,
// so that every kind of cluster a converted image can have appears.
func sourceRaw(t testing.TB, path string, size int64, seed int64) []byte {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	b := make([]byte, size)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < size; {
		n := min(size-off, int64(rng.Intn(300<<10)+1))
		chunk := b[off : off+n]
		switch rng.Intn(4) {
		case 0: // random
			rng.Read(chunk)
		case 1: // text: compresses
			for i := range chunk {
				chunk[i] = "the quick brown fox jumps over the lazy dog 0123456789\n"[(int(off)+i)%55]
			}
		case 2: // zeros written as data: must not be stored
			if _, err := f.WriteAt(chunk, off); err != nil {
				t.Fatal(err)
			}
			off += n
			continue
		case 3: // a hole
			off += n
			continue
		}
		if _, err := f.WriteAt(chunk, off); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	return b
}

// sameBytes fails the test at the first byte that differs.
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: byte %d (%#x) is %#x, want %#x", what, i, i, got[i], want[i])
			}
		}
	}
}

// checkRead reads the whole image in chunks of an odd size, from several
// goroutines at once, then in small reads at odd offsets, and compares
// with want.
func checkRead(t testing.TB, im *Image, want []byte) {
	t.Helper()
	if im.Size() != int64(len(want)) {
		t.Fatalf("Size %d, qemu-img gives %d bytes", im.Size(), len(want))
	}
	got := make([]byte, len(want))
	const chunk = 1<<20 + 4097
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := int64(g) * chunk; off < im.Size(); off += 4 * chunk {
				end := min(off+chunk, im.Size())
				if n, err := im.ReadAt(got[off:end], off); err != nil && n != int(end-off) {
					errs <- fmt.Errorf("ReadAt %d+%d: %d, %v", off, end-off, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sameBytes(t, "image read in 1 MiB+4097 chunks", got, want)
	rng := rand.New(rand.NewSource(1))
	for range 200 {
		if len(want) == 0 {
			break
		}
		off := rng.Int63n(int64(len(want)))
		p := make([]byte, min(int64(rng.Intn(70000)+1), int64(len(want))-off))
		if _, err := im.ReadAt(p, off); err != nil {
			t.Fatalf("ReadAt %d+%d: %v", off, len(p), err)
		}
		sameBytes(t, fmt.Sprintf("read %d+%d", off, len(p)), p, want[off:off+int64(len(p))])
	}
}

// checkMap compares Map with qemu-img map: no data where QEMU says
// none; data where it says data, except where the host file has a hole
// under a data cluster (QEMU reports those as data unless the image is
// preallocated; this package as zeros): there the bytes must be zeros.
func checkMap(t testing.TB, im *Image, img string, want []byte) {
	t.Helper()
	for _, q := range qemuMap(t, img) {
		m, err := im.Map(q.Start, q.Start+q.Length)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m {
			switch {
			case e.Kind == KindData && !q.Data:
				t.Fatalf("%s: Map has data at [%d, +%d) inside qemu-img map's {start %d, length %d, data %v, zero %v}",
					img, e.Off, e.Len, q.Start, q.Length, q.Data, q.Zero)
			case e.Kind != KindData && !zeros.Is(want[e.Off:e.Off+e.Len]):
				t.Fatalf("%s: Map has %s at [%d, +%d), which does not read as zeros", img, e.Kind, e.Off, e.Len)
			}
		}
		start, stop, err := im.Data(q.Start, q.Start+q.Length)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Data && start != stop {
			t.Fatalf("%s: Data(%d, %d) = [%d, %d), qemu-img map says no data", img, q.Start, q.Start+q.Length, start, stop)
		}
		if q.Data && start != stop && !zeros.Is(want[q.Start:start]) {
			t.Fatalf("%s: Data(%d, %d) = [%d, %d) skips data", img, q.Start, q.Start+q.Length, start, stop)
		}
	}
}

// isCause tells whether err is a refusal for cause.
func isCause(err, cause error) bool { return err != nil && IsRefusal(err) && errors.Is(err, cause) }
