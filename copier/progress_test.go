package copier_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// TestOnProgress: the callback sees BytesDone only grow, never 100%
// before the copy is done, a last call in PhaseDone with every byte and
// the data/zero split, and no call after Run returned; Plan.Status may be
// called from another goroutine meanwhile (the race detector watches).
func TestOnProgress(t *testing.T) {
	dir := t.TempDir()
	data := append(randomBytes(48<<20+4097, 5), make([]byte, 16<<20)...) // data, then zeros left as holes
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, data)
	var (
		mu       sync.Mutex
		statuses []copier.Status
		returned atomic.Bool
	)
	o := copier.Options{Src: src, Dst: dst, BlockSize: 1 << 20, QueueDepth: 1, ProgressInterval: 2 * time.Millisecond,
		OnProgress: func(s copier.Status) {
			if returned.Load() {
				t.Error("OnProgress called after Run returned")
			}
			mu.Lock()
			statuses = append(statuses, s)
			mu.Unlock()
		}}
	plan, err := copier.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Status(); s.BytesTotal != int64(len(data)) || s.BytesDone != 0 || s.ETASeconds != -1 {
		t.Errorf("before Run: %+v", s)
	}
	stop := make(chan struct{})
	go func() { // a SIGUSR1 handler's view
		for {
			select {
			case <-stop:
				return
			default:
				plan.Status()
				time.Sleep(time.Millisecond)
			}
		}
	}()
	_, err = plan.Run(context.Background())
	returned.Store(true)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, data)
	checkStatuses(t, statuses, int64(len(data)))
}

func checkStatuses(t *testing.T, statuses []copier.Status, total int64) {
	t.Helper()
	if len(statuses) < 2 {
		t.Fatalf("%d calls: want several", len(statuses))
	}
	var prev int64
	for i, s := range statuses[:len(statuses)-1] {
		if s.BytesDone < prev || s.Percent >= 100 || s.Phase == copier.PhaseDone || s.BytesTotal != total {
			t.Errorf("call %d of %d: %+v (previous done %d): want growing, below 100%%, not done", i, len(statuses), s, prev)
		}
		if s.BytesData+s.BytesZeroed+s.BytesHoles < s.BytesDone {
			t.Errorf("call %d: the split %d+%d+%d falls short of done %d", i, s.BytesData, s.BytesZeroed, s.BytesHoles, s.BytesDone)
		}
		prev = s.BytesDone
	}
	last := statuses[len(statuses)-1]
	if last.Phase != copier.PhaseDone || last.Percent != 100 || last.BytesDone != total || last.ETASeconds != 0 ||
		last.BytesData+last.BytesZeroed+last.BytesHoles != total || last.BytesHoles+last.BytesZeroed < 16<<20-8192 {
		t.Errorf("last call: %+v; want done, 100%%, %d bytes, about 16 MiB of them zeros", last, total)
	}
	if i := slices.IndexFunc(statuses, func(s copier.Status) bool { return s.BytesDone > 0 && s.BytesDone < total }); i < 0 {
		t.Error("no call saw the copy half-way")
	}
}

// TestStatusJSON: the JSON names are the ones --progress json documents,
// and the phase is a word.
func TestStatusJSON(t *testing.T) {
	b, err := json.Marshal(copier.Status{Phase: copier.PhaseSync, ETASeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"phase":"sync"`, `"bytes_done":`, `"bytes_total":`, `"percent":`, `"bytes_data":`,
		`"bytes_zeroed":`, `"bytes_holes":`, `"bytes_read":`, `"seconds":`, `"bytes_per_second":`, `"eta_seconds":-1`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("%s lacks %s", b, k)
		}
	}
}
