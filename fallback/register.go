package fallback

import "github.com/ringcp/ringcp/engine"

// Name is the pool backend's name in engine's registry.
const Name = "pool"

// The pool registers itself with the engine, which cannot import it:
// importing this package (copier does) makes it available by name, the
// backend "auto" falls back to, and the one that serves ends that move
// their own bytes (engine.IOEnd).
func init() {
	engine.Register(engine.BackendInfo{Name: Name, Preference: 100, Caps: engine.WorksEverywhere | engine.AnyEnd,
		New: New, Available: func() error { return nil }})
}
