package engine

import "fmt"

// Phase is what a copy is doing, for progress reports.
type Phase int32

// Phases. A copy goes PhaseCopy (PhaseMap first while SRC is flushed
// before its holes are mapped), then PhaseSync while the barrier runs;
// whoever runs the copy says PhaseDone when it is complete, or
// PhaseVerify while it reads the copy back.
const (
	PhaseCopy   Phase = iota // reading and writing
	PhaseMap                 // flushing SRC before its holes are mapped (MapHoles)
	PhaseSync                // the fdatasync barrier after the last write
	PhaseVerify              // reading back to compare (set by the verifier)
	PhaseDone                // complete: synced and, for a new DST, named
)

var phaseNames = [...]string{"copy", "map", "sync", "verify", "done"}

// String is the phase's name in progress reports: copy, map, sync,
// verify, done.
func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return "unknown"
	}
	return phaseNames[p]
}

// MarshalText writes the name, so that JSON carries "sync", not 2.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a name MarshalText wrote.
func (p *Phase) UnmarshalText(b []byte) error {
	for i, name := range phaseNames {
		if string(b) == name {
			*p = Phase(i)
			return nil
		}
	}
	return fmt.Errorf("unknown phase %q", b)
}

// Phase is the copy's phase now; a nil Progress is copying.
func (p *Progress) Phase() Phase {
	if p == nil {
		return PhaseCopy
	}
	return Phase(p.phase.Load())
}

// SetPhase records what the copy does now; safe from any goroutine, and
// on a nil Progress.
func (p *Progress) SetPhase(ph Phase) {
	if p != nil {
		p.phase.Store(int32(ph))
	}
}

// What finished bytes became on DST: Progress.Data, Zeroed or Holes.
type counted int

const (
	countData counted = iota
	countZeroed
	countHoles
)

// count adds n finished bytes to the counter of their kind; p may be nil.
// Done itself is added where the segment ends (segmentDone).
func (p *Progress) count(kind counted, n int) {
	if p == nil {
		return
	}
	switch kind {
	case countData:
		p.Data.Add(int64(n))
	case countZeroed:
		p.Zeroed.Add(int64(n))
	case countHoles:
		p.Holes.Add(int64(n))
	}
}

// finished counts a slot's finished segment as what it became on DST, in
// the run's Stats and in its Progress.
func (r *run) finished(kind counted, s *slot) {
	n := s.segEnd - s.seg
	switch kind {
	case countData:
		r.stats.BytesWritten += int64(n)
	case countZeroed:
		r.stats.BytesZeroed += int64(n)
	case countHoles:
		r.stats.BytesHoles += int64(n)
	}
	r.job.Progress.count(kind, n)
}

// setPhase records the phase of a copy (not of a read pass, whose
// phase its caller owns).
func (j *Job) setPhase(ph Phase) {
	if j.Progress != nil && j.Check == nil {
		j.Progress.SetPhase(ph)
	}
}
