package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"github.com/ringcp/ringcp/ring"
)

func TestUringSuite(t *testing.T) {
	uringtest.NeedOn(t)
	enginetest.Run(t, engine.NewUring)
	enginetest.RunScheduling(t, engine.NewUring)
}

// uringCells are the io_uring backend's other settings, each the path a
// kernel or a limit would make it take: no fixed buffers (RLIMIT_MEMLOCK),
// no fixed files, READV/WRITEV (before 5.6, which has no fixed buffers
// then), and no DEFER_TASKRUN, SINGLE_ISSUER or COOP_TASKRUN (before 5.19).
func uringCells() map[string]engine.UringOptions {
	cells := map[string]engine.UringOptions{}
	def := engine.DefaultUringOptions()
	for _, noBufs := range []bool{false, true} {
		for _, noFiles := range []bool{false, true} {
			o := def
			o.NoFixedBuffers, o.NoFixedFiles = noBufs, noFiles
			if noBufs || noFiles { // both on is the default, run in full above
				cells[fmt.Sprintf("fixed-buffers=%v/fixed-files=%v", !noBufs, !noFiles)] = o
			}
		}
	}
	for _, noFiles := range []bool{false, true} {
		o := def
		o.Vectored, o.NoFixedFiles = true, noFiles
		cells[fmt.Sprintf("vectored/fixed-files=%v", !noFiles)] = o
	}
	cells["no-taskrun-flags"] = engine.UringOptions{} // no setup flags at all
	return cells
}

// TestUringSettings runs the reduced suite on every other setting, and
// checks that each really took its path.
func TestUringSettings(t *testing.T) {
	uringtest.NeedOn(t)
	for name, o := range uringCells() {
		t.Run(name, func(t *testing.T) {
			checkCaps(t, o)
			enginetest.RunReduced(t, engine.NewUringWith(o))
		})
	}
}

func checkCaps(t *testing.T, o engine.UringOptions) {
	t.Helper()
	caps := enginetest.CapsOf(t, engine.NewUringWith(o))
	if caps.FixedBuffers == (o.NoFixedBuffers || o.Vectored) || caps.FixedFiles == o.NoFixedFiles {
		t.Fatalf("options %+v gave caps %+v", o, caps)
	}
	if o.Flags&ring.FlagDeferTaskrun == 0 && strings.Contains(caps.Detail, "TASKRUN") {
		t.Fatalf("options %+v gave a ring with %s", o, caps.Detail)
	}
}

func BenchmarkUring(b *testing.B) {
	uringtest.NeedOn(b)
	enginetest.Bench(b, engine.NewUring)
}
