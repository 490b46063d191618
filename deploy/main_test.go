package deploy

import (
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
)

// TestMain builds the ringcp binary the image holds once, and removes it.
func TestMain(m *testing.M) { cmdtest.Main(m) }
