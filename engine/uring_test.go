package engine_test

import (
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

func TestUringSuite(t *testing.T) {
	uringtest.NeedOn(t)
	enginetest.Run(t, engine.NewUring)
}
