package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// faultAt is inside the third 128 KiB FUSE request of a copy from offset
// 0, and not page-aligned.
const faultAt = 300000

// faultCase is one copy through faultfs that meets an EIO.
type faultCase struct {
	engine  copier.EngineChoice
	op      string // faultfs.OpRead on SRC or faultfs.OpWrite on DST
	direct  copier.DirectMode
	dstOld  bool // DST exists (it is cut to the prefix) or is new (discarded)
	dstWant copier.DstState
}

func (c faultCase) String() string {
	return fmt.Sprintf("%s/%s/direct=%s/existing=%v", c.engine, c.op, c.direct, c.dstOld)
}

var faultCases = []faultCase{
	{copier.EngineAuto, faultfs.OpRead, copier.DirectAuto, false, copier.DstDiscarded},
	{copier.EnginePool, faultfs.OpRead, copier.DirectAuto, true, copier.DstPrefix},
	{copier.EnginePool, faultfs.OpRead, copier.DirectNever, false, copier.DstDiscarded},
	{copier.EngineAuto, faultfs.OpWrite, copier.DirectAuto, true, copier.DstPrefix},
	{copier.EngineAuto, faultfs.OpWrite, copier.DirectAuto, false, copier.DstDiscarded},
	{copier.EnginePool, faultfs.OpWrite, copier.DirectAuto, false, copier.DstDiscarded},
	{copier.EnginePool, faultfs.OpWrite, copier.DirectNever, true, copier.DstPrefix},
}

// TestCopyFault copies through a FUSE file system that fails a read of SRC
// or a write of DST with EIO at a known offset. The copy must fail with an
// error naming the op, the path, an offset at most one FUSE request before
// the fault, and EIO; what DST holds must be what the report says; and no
// descriptor, ring, mapping or goroutine may be left behind, nor any file
// under the mount held (it must unmount).
func TestCopyFault(t *testing.T) {
	src := noise(1<<20, 7)
	warmUp(t, src)
	for _, c := range faultCases {
		t.Run(c.String(), func(t *testing.T) {
			if c.engine == copier.EngineAuto {
				uringtest.NeedOn(t) // auto must pick the pool on FUSE, not for want of io_uring
			}
			back := t.TempDir()
			writeFile(t, filepath.Join(back, "src"), src)
			if c.dstOld {
				writeFile(t, filepath.Join(back, "dst"), noise(3<<20, 8))
			}
			name := map[string]string{faultfs.OpRead: "src", faultfs.OpWrite: "dst"}[c.op]
			faultName := name
			if c.op == faultfs.OpWrite {
				faultName = writtenAs(name, c.dstOld)
			}
			fs := faultfs.Mount(t, back, faultfs.Fault{Op: c.op, Offset: faultAt, Errno: syscall.EIO, Name: faultName})
			opts := copier.Options{Src: fs.Path("src"), Dst: fs.Path("dst"), Engine: c.engine, Direct: c.direct,
				BlockSize: 64 << 10, QueueDepth: 4}
			var rep copier.Report
			noLeaks(t, func() { rep = checkFault(t, c, opts, fs.Path(name)) })
			if err := fs.Unmount(); err != nil {
				t.Errorf("a file under the mount is still held after the copy: %v", err)
			}
			checkDst(t, c, rep, filepath.Join(back, "dst"), src)
			mustNotExist(t, filepath.Join(back, writtenAs("dst", false)))
		})
	}
}

// warmUp copies through a mount without faults with both engines, so
// that what the FUSE server and Go's runtime create once (splice pipes,
// threads, heap) exists before anything is measured.
func warmUp(t *testing.T, src []byte) {
	back := t.TempDir()
	writeFile(t, filepath.Join(back, "src"), src)
	fs := faultfs.Mount(t, back)
	for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		dst := fs.Path("dst-" + string(e))
		if _, err := copier.Copy(context.Background(), copier.Options{Src: fs.Path("src"), Dst: dst, Engine: e}); err != nil {
			t.Fatalf("copy without faults: %v", err)
		}
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("copy without faults differs: %d bytes, %v", len(got), err)
		}
	}
	if err := fs.Unmount(); err != nil {
		t.Fatal(err)
	}
}

// checkFault runs the failing copy and checks its error and report.
func checkFault(t *testing.T, c faultCase, opts copier.Options, path string) copier.Report {
	t.Helper()
	rep, err := copier.Copy(context.Background(), opts)
	var oe *engine.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want an *engine.OpError wrapping EIO", err)
	}
	if oe.Op != c.op || oe.Path != path || oe.Offset > faultAt || oe.Offset <= faultAt-faultfs.MaxRequest {
		t.Errorf("error %q: want %s of %s at an offset in (%d, %d]", err, c.op, path, faultAt-faultfs.MaxRequest, faultAt)
	}
	msg := fmt.Sprintf("%s %s at offset %d: input/output error (EIO)", c.op, path, oe.Offset)
	if err.Error() != msg {
		t.Errorf("message %q, want %q", err, msg)
	}
	// The barrier runs after a failure too, so the prefix the report
	// claims is durable; faultfs's fsync works.
	if rep.DstState != c.dstWant || rep.Contiguous > faultAt || !rep.Synced {
		t.Errorf("report: DST %v, contiguous %d, synced %v; want %v, at most %d, synced", rep.DstState, rep.Contiguous, rep.Synced, c.dstWant, faultAt)
	}
	return rep
}

// checkDst looks at DST's backing file: gone when it was new, SRC's
// contiguous prefix when it existed.
func checkDst(t *testing.T, c faultCase, rep copier.Report, path string, src []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if !c.dstOld {
		if err == nil {
			t.Errorf("a new DST is left behind after a failed copy (%d bytes)", len(got))
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != rep.Contiguous || !bytes.Equal(got, src[:len(got)]) {
		t.Errorf("DST is %d bytes, report says it holds the first %d of SRC (equal: %v)",
			len(got), rep.Contiguous, bytes.Equal(got, src[:min(len(got), len(src))]))
	}
}

// writtenAs is the name a DST file is written under on FUSE: an existing
// one in place, a new one under its hidden temporary name (FUSE gets no
// O_TMPFILE), renamed when complete.
func writtenAs(name string, existing bool) string {
	if existing {
		return name
	}
	return "." + name + ".ringcp-tmp"
}

// mustNotExist fails the test if path exists.
func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", path, err)
	}
}

func noise(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed+1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
