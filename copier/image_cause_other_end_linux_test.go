package copier

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/qcow2"
)

// TestCauseNotPinnedOnDst: DST fails first (ENOSPC) while a read of a
// damaged image SRC is in flight, which fails as the engine drains: the
// copy's error is DST's ENOSPC alone, not "no space left on device:
// decompress cluster ...", which blamed the image for the full DST (seen
// with the CLI: a 512 KiB tmpfs DST, a qcow2 damaged past 2 MiB, -b 1m -q
// 3, 3 runs in 24). A failed read of SRC itself still gets the cause.
func TestCauseNotPinnedOnDst(t *testing.T) {
	damage := &qcow2.IOError{Op: "decompress cluster", Name: "img.qcow2", Off: 2 << 20, Err: errors.New("zstd: truncated or invalid frame")}
	x := &imageReader{name: "img.qcow2"}
	x.keep(damage)
	src := &held{io: x, cause: x.met}
	a := &acquired{src: src}

	full := &engine.OpError{Op: "write", Path: "/mnt/small/out.raw", Offset: 512 << 10, Err: syscall.ENOSPC}
	err := explainSrc(a, full, nil)
	if !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "decompress") {
		t.Errorf("DST full while a damaged cluster was read: got %q, want the write's ENOSPC alone", err)
	}

	read := &engine.OpError{Op: "read", Path: "img.qcow2", Offset: 1 << 20, Err: syscall.EIO}
	if err := explainSrc(a, read, nil); !errors.Is(err, damage) || !strings.Contains(err.Error(), "decompress cluster") {
		t.Errorf("a read of SRC failed on the damaged cluster: got %q, want it named", err)
	}
}
