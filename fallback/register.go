package fallback

import "github.com/ringcp/ringcp/engine"

// Name is the pool backend's name in engine's registry.
const Name = "pool"

// The pool registers itself with the engine, which cannot import it:
// importing this package (copier does) makes it available by name, and
// the backend "auto" falls back to.
func init() {
	engine.Register(engine.BackendInfo{Name: Name, Preference: 100, Caps: engine.WorksEverywhere,
		New: New, Available: func() error { return nil }})
}
