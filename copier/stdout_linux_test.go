package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ringcp/ringcp/copier"
	"golang.org/x/sys/unix"
)

// toPipe copies o with DST "-" into a pipe read as it goes, and returns
// what came out of the pipe.
func toPipe(t *testing.T, o copier.Options) ([]byte, copier.Report, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		got <- b
	}()
	o.Dst, o.Stream.Stdout = "-", w
	rep, err := copier.Copy(context.Background(), o)
	w.Close()
	return <-got, rep, err
}

// TestStdoutDst: files (with holes too) to standard output come out in
// order, byte for byte, at every awkward size, with requests small and
// many enough to complete out of order.
func TestStdoutDst(t *testing.T) {
	sizes := append(charSizes, 4095, 64<<20+12345)
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", eng, n), func(t *testing.T) {
				src := filepath.Join(t.TempDir(), "src")
				data := randomBytes(n, uint64(n))
				writeFile(t, src, data)
				got, rep, err := toPipe(t, copier.Options{Src: src, Engine: eng, BlockSize: 64 << 10, QueueDepth: 32})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("stdout holds %d bytes, not SRC's %d", len(got), len(data))
				}
				if rep.DstState != copier.DstComplete || rep.Length != n {
					t.Fatalf("report %+v", rep)
				}
			})
		}
	}
	t.Run("sparse", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "sparse")
		data := sparseLayout(t, rand.New(rand.NewPCG(9, 9)), src, 9)
		got, _, err := toPipe(t, copier.Options{Src: src, BlockSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("a sparse SRC on stdout differs (%d bytes, want %d)", len(got), len(data))
		}
	})
}

// TestStreamToStdout: stdin to stdout (a stream of unknown size), and
// /dev/zero with a length (zeroed ranges written as zeros), at every
// awkward size; the writer may be any io.Writer.
func TestStreamToStdout(t *testing.T) {
	for _, n := range charSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data := randomBytes(n, uint64(n)+1)
			var out bytes.Buffer
			rep, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: "-",
				Stream: copier.StreamOptions{Stdin: bytes.NewReader(data), Stdout: &out}})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), data) || rep.Length != n {
				t.Fatalf("stdout holds %d bytes, want %d (length %d)", out.Len(), n, rep.Length)
			}
			got, _, err := toPipe(t, copier.Options{Src: "/dev/zero", Length: n, LengthSet: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, make([]byte, n)) {
				t.Fatalf("/dev/zero to stdout: %d bytes, not %d zeros", len(got), n)
			}
		})
	}
}

// TestStdoutRefusals: an offset, a verification, a terminal; refused.
func TestStdoutRefusals(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, randomBytes(8192, 4))
	var out bytes.Buffer
	for _, o := range []copier.Options{
		{Src: src, Dst: "-", DstOffset: 4096},
		{Src: src, Dst: "-", Verify: true},
		{Src: src, Dst: "-", Resume: true},
	} {
		o.Stream.Stdout = &out
		_, err := copier.Copy(context.Background(), o)
		var r *copier.RefusedError
		if !errors.As(err, &r) {
			t.Errorf("%+v: %v, want a refusal", o, err)
		}
	}
	tty := openTerminal(t)
	_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: "-", Stream: copier.StreamOptions{Stdout: tty}})
	var r *copier.RefusedError
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "terminal") {
		t.Fatalf("a terminal as stdout: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("refused copies wrote %d bytes", out.Len())
	}
}

// openTerminal is the terminal end of a new pseudo-terminal.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, m.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStdoutReaderGone: a reader that closes its end early fails the
// copy with EPIPE, named, promptly.
func TestStdoutReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go func() {
		b := make([]byte, 1000)
		io.ReadFull(r, b)
		r.Close()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/urandom", Dst: "-",
			Length: 1 << 30, LengthSet: true, Stream: copier.StreamOptions{Stdout: w}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.EPIPE) || !strings.Contains(err.Error(), "stdout") {
			t.Fatalf("%v, want EPIPE on stdout", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the copy hangs after its reader went away")
	}
}

// TestStdoutStopWhileBlocked: a copy whose reader stops reading (a full
// pipe) still ends when its context is cancelled.
func TestStdoutStopWhileBlocked(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := copier.Copy(ctx, copier.Options{Src: "/dev/urandom", Dst: "-",
			Length: 1 << 30, LengthSet: true, Stream: copier.StreamOptions{Stdout: w}})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a stopped copy succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the copy hangs after a stop while stdout is full")
	}
}

// TestBatchRefusesStdout: jobs of a batch run side by side: none may
// write standard output, where their bytes would mix.
func TestBatchRefusesStdout(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, randomBytes(4096, 6))
	var out bytes.Buffer
	_, err := copier.PrepareAll([]copier.Options{
		{Src: src, Dst: filepath.Join(t.TempDir(), "a")},
		{Src: src, Dst: "-", Stream: copier.StreamOptions{Stdout: &out}},
	}, copier.BatchOptions{})
	var b *copier.BatchError
	if !errors.As(err, &b) || len(b.Jobs) != 1 || b.Jobs[0].Index != 1 {
		t.Fatalf("%v, want job 2 refused", err)
	}
}

// TestStreamSparseNever: a stream of unknown size copied with every
// byte as data (ringcp dd's way) is not refused for the 16 TiB its
// length is capped at.
func TestStreamSparseNever(t *testing.T) {
	data := randomBytes(10000, 10)
	dst := filepath.Join(t.TempDir(), "dst")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dst, Sparse: copier.SparseNever,
		Stream: copier.StreamOptions{Stdin: bytes.NewReader(data)}}); err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, data)
}
