package engine

// Phase is what a copy is doing, for a progress display: Progress.Phase
// says which of its counters is moving.
type Phase int32

// The phases, in the order a copy goes through them.
const (
	// PhaseCopy: data moves (Progress.Done and Read grow).
	PhaseCopy Phase = iota
	// PhaseSync: the final fdatasync barrier runs; Done stands at the
	// copied length until it completes.
	PhaseSync
	// PhaseVerify: DST is read back and checked after the barrier
	// (copier's verification); Progress.Verified grows.
	PhaseVerify
)

// String names the phase as a progress line shows it.
func (p Phase) String() string {
	switch p {
	case PhaseSync:
		return "sync"
	case PhaseVerify:
		return "verify"
	}
	return "copy"
}

// Phase is the phase the copy is in. A nil Progress is always copying.
func (p *Progress) Phase() Phase {
	if p == nil {
		return PhaseCopy
	}
	return Phase(p.phase.Load())
}

// SetPhase moves the copy to phase ph; the engine sets PhaseSync when its
// final barrier starts, and copier sets PhaseVerify. Safe on a nil
// Progress.
func (p *Progress) SetPhase(ph Phase) {
	if p != nil {
		p.phase.Store(int32(ph))
	}
}
