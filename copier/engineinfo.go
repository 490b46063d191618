package copier

import "github.com/ringcp/ringcp/engine"

// What a caller of copier needs to know of the engine below it, under
// copier's names, so that it imports copier alone.

// CanceledError is Run's error for a copy its context stopped: what was
// written, how much of the range is complete without gaps, and whether it
// was synced (Pass: a read pass after the copy was stopped, which wrote
// nothing). It unwraps to the context's error.
type CanceledError = engine.CanceledError

// Backends are the engines a copy may run on (Options.Engine takes these
// names and "auto"), most preferred first.
func Backends() []string { return engine.BackendNames() }
