package fallback_test

import (
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
)

func TestPoolSuite(t *testing.T) {
	enginetest.Run(t, fallback.New)
	enginetest.RunScheduling(t, fallback.New)
}

func BenchmarkPool(b *testing.B) {
	enginetest.Bench(b, fallback.New)
}

// TestRegistered: importing the pool registers it by name, after io_uring
// in preference, as the backend that works everywhere; a second
// registration of a name panics.
func TestRegistered(t *testing.T) {
	names := engine.BackendNames()
	if len(names) != 2 || names[0] != engine.UringName || names[1] != fallback.Name {
		t.Fatalf("backends %v: want [uring pool]", names)
	}
	b, ok := engine.LookupBackend(fallback.Name)
	if !ok || b.Caps&engine.WorksEverywhere == 0 || b.Available() != nil {
		t.Fatalf("pool: %+v, %v: want a backend that works everywhere", b, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering pool twice did not panic")
		}
	}()
	engine.Register(b)
}
