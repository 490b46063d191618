package fallback_test

import (
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
)

func TestPoolSuite(t *testing.T) {
	enginetest.Run(t, fallback.New)
}

func BenchmarkPool(b *testing.B) {
	enginetest.Bench(b, fallback.New)
}
