package copier_test

import (
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
)

// TestMain removes what the kill tests' ringcp binary leaves (cmdtest.Binary).
func TestMain(m *testing.M) { cmdtest.Main(m) }
