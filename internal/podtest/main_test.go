package podtest

import (
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
)

// TestMain builds the ringcp binary the pod runs once, and removes it.
func TestMain(m *testing.M) { cmdtest.Main(m) }
