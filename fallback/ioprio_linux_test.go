package fallback_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/fallback"
)

// TestWorkerThreadsKeepTheirPriority: with an I/O priority, every worker
// runs on a thread of its own that has it, and those threads have their
// old priority back once the pool is closed, before any other goroutine
// may run there.
func TestWorkerThreadsKeepTheirPriority(t *testing.T) {
	idle := engine.NewIOPrio(engine.IOPrioClassIdle, 0)
	if n := threadsAt(t, idle); n != 0 {
		t.Fatalf("%d threads at idle before the pool", n)
	}
	be, err := fallback.New(engine.Setup{Depth: 5, IOPrio: idle})
	if err != nil {
		t.Fatal(err)
	}
	if n := threadsAt(t, idle); n != 5 {
		t.Errorf("%d threads at idle with 5 workers", n)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if n := threadsAt(t, idle); n != 0 {
		t.Errorf("%d threads still at idle after Close", n)
	}
}

// threadsAt counts this process's threads at priority p.
func threadsAt(t *testing.T, p engine.IOPrio) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if got, err := engine.ThreadIOPrio(tid); err == nil && got == p {
			n++
		}
	}
	return n
}
