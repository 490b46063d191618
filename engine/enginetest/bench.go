package enginetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// benchSize is one copy of Bench: large enough that setup is noise, small
// enough for a 2-core CI machine.
const benchSize = 64 << 20

// Bench measures a backend on a 64 MiB file copy, buffered and O_DIRECT,
// with the default block size and a depth of 8, reporting MB/s through
// b.SetBytes. Every backend runs the same benchmark, so their numbers
// compare. The page cache makes the buffered case a memory copy after the
// first round; the direct case reaches the disk.
func Bench(b *testing.B, nb engine.NewBackend) {
	for _, direct := range []bool{false, true} {
		name := map[bool]string{false: "buffered", true: "direct"}[direct]
		b.Run(name, func(b *testing.B) { benchCopy(b, nb, direct) })
	}
}

func benchCopy(b *testing.B, nb engine.NewBackend, direct bool) {
	dir := b.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(b, srcPath, RandomBytes(benchSize, 11))
	b.SetBytes(benchSize)
	b.ResetTimer()
	for range b.N {
		job, cleanup := NewJob(b, srcPath, dstPath, direct, align.DefaultBlockSize, 8)
		job.Length, job.FinalSize, job.CutBackOnStop = benchSize, benchSize, true
		st, err := engine.Run(context.Background(), job, nb)
		cleanup()
		if err != nil || st.BytesWritten != benchSize {
			b.Fatalf("copy: %v (stats %+v)", err, st)
		}
	}
}

// CapsOf runs a small copy with nb and returns the capabilities its
// backend reported, to check that a setting took the path it names.
func CapsOf(t testing.TB, nb engine.NewBackend) engine.Caps {
	t.Helper()
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src")
	writeFile(t, srcPath, RandomBytes(4096, 1))
	job, cleanup := NewJob(t, srcPath, filepath.Join(dir, "dst"), false, 4096, 1)
	defer cleanup()
	job.Length = 4096
	st, err := engine.Run(context.Background(), job, nb)
	if err != nil {
		t.Fatal(err)
	}
	return st.Caps
}
