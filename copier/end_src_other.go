//go:build !linux

package copier

// Elsewhere than Linux no SRC moves its own bytes (end_src_linux.go):
// the types the portable code names are empty, and a meter has nothing
// to add from them.
type (
	srcIO struct{}
	seqIO struct{}
)

func (m *meter) fromSrc(*Status) {}

// seq: no SRC is read in order only here.
func (ep *endpoint) seq() bool { return false }
