package copier

import "os"

// PrepareEach and EachPlan.Run are the read that a sync across hosts
// makes of the end on this host (cli's ssh sync): the end is read
// through the engine as a copy reads SRC (deep O_DIRECT reads, the backend, block size and
// depth chosen the same way), under the copy's caps (a rate, an I/O
// priority, yielding to others), and every chunk is handed to Each. It
// writes nothing; the end is opened read-only.

// EachOptions describe a read of one file or device handed, chunk by
// chunk, to Each.
type EachOptions struct {
	// ReadOptions: Src, its range, the block size, depth, engine, direct
	// I/O, Progress (Verified counts what Each was given) and OnProgress
	// (Dst and Sum are not used).
	ReadOptions
	// MaxRate, IOPrio and Yield are as in Options.
	MaxRate int64
	IOPrio  string
	Yield   bool
	// SrcFile, when not nil, is Src as the caller opened and checked it
	// (a sync's SRC, which blocksync opened and locked): the read is
	// refused (KindChanged) unless Src still names that file or device,
	// and every descriptor the read opens is checked to be it, so that a
	// file swapped in at the name is never read in its place. It stays
	// the caller's to close, after Run.
	SrcFile *os.File
	// Each gets every chunk of the range once: rel from the range's
	// start, in any order, from one goroutine at a time (the engine's:
	// a slow Each holds every read back). data is valid only during the
	// call. An error stops the read and is returned by Run.
	Each func(rel int64, data []byte) error
}

// EachPlan is a read PrepareEach decided, for Run.
type EachPlan struct {
	p    *Plan
	each func(rel int64, data []byte) error
	read ReadOptions
}
