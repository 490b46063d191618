package copier

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestResumeCutsOwnedDst: a resumable whole-file copy into an existing,
// longer DST records its state before it cuts DST (the state must name
// DST before the first change). Killed in between, which here is a copy
// acquired, its state written, and never run, DST still holds its old
// bytes past SRC's end. The rerun must cut it as the first run would
// have: DST is SRC, to the byte and the size. A range copy (the keep
// policy) keeps what lies past its range. Both engines.
func TestResumeCutsOwnedDst(t *testing.T) {
	for _, eng := range []EngineChoice{EngineUring, EnginePool} {
		t.Run(string(eng), func(t *testing.T) {
			if eng == EngineUring {
				uringtest.NeedOn(t)
			}
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			data := enginetest.RandomBytes(5<<20+3, 61)
			old := enginetest.RandomBytes(9<<20, 62)
			write(t, src, data)
			write(t, dst, old)
			opts := Options{Src: src, Dst: dst, Resume: true, Engine: eng}
			killedAfterBegin(t, opts)
			if got := fileSize(t, dst); got != int64(len(old)) {
				t.Fatalf("DST is %d bytes before the rerun: the simulated kill should have left it uncut (%d)", got, len(old))
			}
			run(t, opts)
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
				t.Fatalf("DST is %d bytes after the resumed copy, want SRC's %d, byte for byte", len(got), len(data))
			}

			// The keep policy: DST's bytes past the range are DST's own.
			write(t, dst, old)
			opts.DstSize = SizeKeep
			killedAfterBegin(t, opts)
			run(t, opts)
			want := append(append([]byte(nil), data...), old[len(data):]...)
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, want) {
				t.Fatalf("a resumed range copy did not keep DST's bytes past the range (DST %d bytes)", len(got))
			}
		})
	}
}

// killedAfterBegin does what a kill -9 right after the state was
// written leaves: the copy acquired (its state records it), nothing run.
func killedAfterBegin(t *testing.T, opts Options) {
	t.Helper()
	p, err := Prepare(opts)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	a, err := p.acquire(context.Background(), &rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.release()
	if _, err := os.Stat(StatePath(opts.Dst)); err != nil {
		t.Fatalf("no state after acquire: %v", err)
	}
}

func run(t *testing.T, opts Options) {
	t.Helper()
	p, err := Prepare(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
