package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
)

// TestSourceShrank: SRC is truncated by another process after Prepare
// measured it. Run must fail with a read error wrapping
// engine.ErrSourceShrank at or past the new end, never report success;
// a new DST is discarded, an existing one keeps exactly SRC's prefix.
func TestSourceShrank(t *testing.T) {
	const size, cut = 4 << 20, 1 << 20
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		for _, existing := range []bool{false, true} {
			dir := t.TempDir()
			srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			src := noise(size, 11)
			writeFile(t, srcPath, src)
			if existing {
				writeFile(t, dstPath, noise(size, 12))
			}
			p, err := copier.Prepare(copier.Options{Src: srcPath, Dst: dstPath, Engine: eng, BlockSize: 64 << 10, QueueDepth: 4})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("truncate", "-s", "1M", srcPath).CombinedOutput(); err != nil {
				t.Fatalf("truncate: %v\n%s", err, out)
			}
			rep, err := p.Run(context.Background())
			var oe *engine.OpError
			if !errors.Is(err, engine.ErrSourceShrank) || !errors.As(err, &oe) || oe.Op != "read" || oe.Path != srcPath || oe.Offset < cut {
				t.Fatalf("%s existing=%v: err = %v; want a read of %s at or past %d wrapping ErrSourceShrank", eng, existing, err, srcPath, cut)
			}
			got, rerr := os.ReadFile(dstPath)
			switch {
			case !existing && (rerr == nil || rep.DstState != copier.DstDiscarded):
				t.Errorf("%s: new DST left behind (%d bytes) or not reported discarded (%v)", eng, len(got), rep.DstState)
			case existing && (rep.DstState != copier.DstPrefix || int64(len(got)) != rep.Contiguous || !bytes.Equal(got, src[:len(got)])):
				t.Errorf("%s: DST %d bytes, state %v, contiguous %d: want SRC's prefix", eng, len(got), rep.DstState, rep.Contiguous)
			}
		}
	}
}

// TestSourceGrew: SRC grows (written past its end, and in place) after
// Prepare measured it, for a copy that was to take all of it. Run
// completed a DST of the old size, short of SRC, as if it were SRC's
// copy; it must refuse, nothing written, as for a SRC replaced
// meanwhile.
func TestSourceGrew(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, noise(4<<20, 13))
	p, err := copier.Prepare(copier.Options{Src: src, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(noise(1<<20, 14))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || refused.Kind != copier.KindChanged || !strings.Contains(err.Error(), "grew") {
		t.Fatalf("err = %v (DST %v); want a refusal saying SRC grew", err, rep.DstState)
	}
	wantUnnamed(t, dst)
}
