package copier_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
)

// deadBackend takes every request and never completes one: Reap fails
// for good, as a ring does that the kernel stopped answering (EBADR,
// EEXIST from another thread). The engine cannot drain it
// (engine.ErrUndrained).
type deadBackend struct{}

func (deadBackend) Name() string                              { return "dead" }
func (deadBackend) Caps() engine.Caps                         { return engine.Caps{} }
func (deadBackend) Submit(reqs []engine.Request) (int, error) { return len(reqs), nil }
func (deadBackend) Reap([]engine.Completion, int, time.Duration) (int, error) {
	return 0, syscall.EBADR
}
func (deadBackend) Close() error { return nil }

const deadName = "test-dead-ring"

func init() {
	// Last in preference: auto never picks it; only asked for by name.
	engine.Register(engine.BackendInfo{Name: deadName, Preference: 1 << 20,
		New:       func(engine.Setup) (engine.Backend, error) { return deadBackend{}, nil },
		Available: func() error { return nil }})
}

// TestUndrainedNewDstSaysChanging: a copy to a new DST whose backend dies
// with requests in flight reports DST as "changing" (DstChanging: "holds
// the first N bytes of the copy; requests in flight may change the
// rest"), but a new DST is never given its name before it is complete:
// there is no DST. The unnamed inode vanishes when the process exits; a
// temporary file is not DST. What the report says DST holds must be
// true; here it describes a file that does not exist.
func TestUndrainedNewDstSaysChanging(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(1<<20, 91))
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: deadName})
	if !errors.Is(err, engine.ErrUndrained) {
		t.Fatalf("err = %v, want ErrUndrained", err)
	}
	if _, serr := os.Lstat(dst); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("DST exists after an undrained copy to a new DST: %v", serr)
	}
	if rep.DstState != copier.DstDiscarded {
		t.Errorf("DST does not exist, but the report says %q (contiguous %d); want %q",
			rep.DstState, rep.Contiguous, copier.DstDiscarded)
	}
}
