package copier_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestFallbackWhenSwitchedOff switches io_uring off for real (sysctl
// kernel.io_uring_disabled=2): auto mode must copy with the pool and say
// why; --engine uring must be refused before DST exists.
func TestFallbackWhenSwitchedOff(t *testing.T) {
	uringtest.SwitchOff(t, "2")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomBytes(3<<20+1, 13)
	writeFile(t, src, data)

	dst := filepath.Join(dir, "auto")
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst})
	if err != nil {
		t.Fatalf("auto with io_uring off: %v", err)
	}
	if rep.Engine != "pool" || !strings.Contains(rep.FallbackReason, "io_uring_disabled=2") {
		t.Fatalf("engine %q, reason %q: want the pool and the sysctl named", rep.Engine, rep.FallbackReason)
	}
	compareFile(t, dst, data)

	forced := filepath.Join(dir, "forced")
	_, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: forced, Engine: copier.EngineUring})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("--engine uring with io_uring off: err = %v, want a refusal", err)
	}
	if _, err := os.Lstat(forced); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused copy created DST: %v", err)
	}
}
