package enginetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// checkJob is a read pass over src (and dst when not ""), direct or not,
// with the given check.
func checkJob(t *testing.T, src, dst string, length int64, direct bool, check engine.CheckFunc) (engine.Job, func()) {
	t.Helper()
	flag := 0
	if direct {
		flag = syscall.O_DIRECT
	}
	job := engine.Job{BlockSize: 128 << 10, SrcAlign: 1, DstAlign: 1, Length: length, Check: check}
	job.Files[engine.FileSrc] = mustOpen(t, src, flag)
	if direct {
		job.SrcAlign = dioAlign(t, job.Files[engine.FileSrc])
	}
	if dst != "" {
		job.Files[engine.FileDst] = mustOpen(t, dst, flag)
		if direct {
			job.DstAlign = dioAlign(t, job.Files[engine.FileDst])
		}
	}
	return job, withBuffers(t, &job, 4)
}

// ReadPasses: a read pass hands every byte of the range to Check, once,
// and writes nothing; a compare hands both sides; Check's error stops the
// pass and comes back; a file shorter than its range fails with
// ErrEndedEarly; holes mapped are not read.
func ReadPasses(t *testing.T, tg Target) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprint("direct=", direct), func(t *testing.T) { readPasses(t, tg, direct) })
	}
}

func readPasses(t *testing.T, tg Target, direct bool) {
	const size = 3<<20 + 4097
	dir := t.TempDir()
	data := RandomBytes(size, 93)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, a, data)
	writeFile(t, b, data)

	got := make([]byte, size)
	var mu sync.Mutex
	job, cleanup := checkJob(t, a, "", size, direct, func(rel int64, src, dst []byte) error {
		mu.Lock()
		defer mu.Unlock()
		copy(got[rel:], src)
		return nil
	})
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	cleanup()
	Compare(t, got, data)

	same := func(rel int64, src, dst []byte) error {
		if !bytes.Equal(src, dst) {
			return fmt.Errorf("differs in the chunk at %d", rel)
		}
		return nil
	}
	job, cleanup = checkJob(t, a, b, size, direct, same)
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatalf("compare of equal files: %v", err)
	}
	cleanup()

	bad := rand.New(rand.NewPCG(5, 6)).Int64N(size)
	changed := bytes.Clone(data)
	changed[bad] ^= 0x40
	writeFile(t, b, changed)
	job, cleanup = checkJob(t, a, b, size, direct, same)
	tg.serve(t, &job)
	_, err := engine.Run(context.Background(), job, tg.New)
	cleanup()
	if err == nil {
		t.Fatalf("compare missed a byte changed at %d", bad)
	}

	job, cleanup = checkJob(t, a, "", size+65536, direct, func(int64, []byte, []byte) error { return nil })
	tg.serve(t, &job)
	_, err = engine.Run(context.Background(), job, tg.New)
	cleanup()
	if !errors.Is(err, engine.ErrEndedEarly) {
		t.Fatalf("a range past the end: %v, want ErrEndedEarly", err)
	}
	holesNotRead(t, tg, direct)
}

// holesNotRead: with MapHoles, a read pass reads SRC's data and reports
// its holes to the Observer without reading them.
func holesNotRead(t *testing.T, tg Target, direct bool) {
	path := filepath.Join(t.TempDir(), "sparse")
	want := MakeSparse(t, path, []Piece{{"data", 1 << 20}, {"hole", 4 << 20}, {"data", 1<<20 + 5}}, 7)
	var read int64
	var mu sync.Mutex
	job, cleanup := checkJob(t, path, "", int64(len(want)), direct, func(rel int64, src, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		read += int64(len(src))
		if !bytes.Equal(src, want[rel:rel+int64(len(src))]) {
			return fmt.Errorf("chunk at %d is not the file's", rel)
		}
		return nil
	})
	defer cleanup()
	job.MapHoles = true
	rec := newRecorder()
	job.Observer = rec
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	var holes int64
	for _, n := range rec.holes {
		holes += n
	}
	if holes < 4<<20-8192 || read+holes != int64(len(want)) {
		t.Fatalf("read %d, holes %d: want the 4 MiB hole unread, and all %d bytes accounted", read, holes, len(want))
	}
}
