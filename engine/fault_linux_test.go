package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestRealFaults runs each backend into a real EIO from a FUSE server,
// reading SRC and writing DST. copier never gives FUSE files to io_uring
// (FOPEN_DIRECT_IO breaks its short counts), so this is where io_uring's
// errno path meets a real fault: faultfs's default mode goes through the
// page cache, where io_uring's counts are honest on Linux 6.18 (pinned by
// faultfs's TestIOURing). The error must name the op, the file and an
// offset within one FUSE request before the fault.
func TestRealFaults(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultfs mounts with mount(2) here: needs root")
	}
	backends := map[string]engine.NewBackend{"io_uring": engine.NewUring, "pool": fallback.New}
	for name, nb := range backends {
		for _, op := range []string{faultfs.OpRead, faultfs.OpWrite} {
			t.Run(name+"/"+op, func(t *testing.T) {
				if name == "io_uring" {
					uringtest.NeedOn(t)
				}
				realFault(t, nb, op)
			})
		}
	}
}

func realFault(t *testing.T, nb engine.NewBackend, op string) {
	const size, at = 1 << 20, 300000
	back := t.TempDir()
	if err := os.WriteFile(filepath.Join(back, "src"), enginetest.RandomBytes(size, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	target := map[string]string{faultfs.OpRead: "src", faultfs.OpWrite: "dst"}[op]
	fs := faultfs.Mount(t, back, faultfs.Fault{Op: op, Offset: at, Errno: syscall.EIO, Name: target})
	job, cleanup := enginetest.NewJob(t, fs.Path("src"), fs.Path("dst"), false, 64<<10, 4)
	job.Length, job.FinalSize, job.CutBackOnStop = size, size, true
	st, err := engine.Run(context.Background(), job, nb)
	cleanup()
	var oe *engine.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want an *engine.OpError wrapping EIO", err)
	}
	if oe.Op != op || oe.Path != fs.Path(target) || oe.Offset > at || oe.Offset <= at-faultfs.MaxRequest {
		t.Errorf("error %q: want %s of %s at an offset in (%d, %d]", err, op, fs.Path(target), at-faultfs.MaxRequest, at)
	}
	if st.Contiguous > at {
		t.Errorf("contiguous %d is past the fault at %d", st.Contiguous, at)
	}
	if err := fs.Unmount(); err != nil {
		t.Errorf("a file under the mount is still held: %v", err)
	}
}
