//go:build !linux

package fallback

import (
	"errors"

	"github.com/ringcp/ringcp/engine"
)

// New needs Linux's pread/pwrite semantics on O_DIRECT descriptors and
// the engine's Linux plumbing; elsewhere it fails with
// errors.ErrUnsupported, so that importers still compile.
func New(s engine.Setup) (engine.Backend, error) {
	return nil, errors.ErrUnsupported
}
