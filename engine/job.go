package engine

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"sync/atomic"

	"github.com/ringcp/ringcp/align"
)

// Job is one copy: Length bytes from SrcOff in FileSrc to DstOff in FileDst.
type Job struct {
	Files Files
	// Ends, where not nil, are ends that are not descriptors (IOEnds:
	// an NBD export, package nbdend): Ends[id] stands for Files[id], which
	// is then nil. Every other end is the FileEnd of its file.
	Ends   Ends
	SrcOff int64
	DstOff int64
	Length int64
	// BlockSize is the most one request moves; a multiple of SrcAlign and
	// DstAlign. Each buffer holds one block.
	BlockSize int
	// MaxRequest, when positive, is the most one read or write moves,
	// below a block: a chunk larger than that (a whole verification cell,
	// see Grid) is moved in several requests. A cgroup I/O limit wants
	// small requests, so that what the kernel holds back is short. It is
	// rounded down to the alignment (at least one unit); the budget's
	// window may cut requests further while the copy runs.
	MaxRequest int
	// Buffers are the slots, one block each; their number is the queue
	// depth. From align.AllocBuffers: outside the Go heap. Ignored when
	// Budget is set.
	Buffers [][]byte
	// Budget, when not nil, is the slot pool this copy shares with others
	// running at the same time (its buffers then stand for Buffers); nil
	// makes one of Buffers for this copy alone.
	Budget *Budget
	// SrcAlign and DstAlign are the O_DIRECT alignment of offsets and
	// lengths on each side, 1 when that side is buffered.
	SrcAlign int
	DstAlign int
	// Sync asks for an fdatasync barrier on DST before success.
	Sync bool
	// FinalSize, when positive, is DST's size, set after the last write and
	// before the barrier (a regular file DST only). 0 leaves the size alone.
	FinalSize int64
	// CutBackOnStop: a copy that fails or is cancelled cuts DST (a file
	// that held nothing else) to DstOff+Stats.Contiguous, so it never
	// looks finished.
	CutBackOnStop bool
	// Preallocate reserves DST's data ranges with fallocate a window ahead
	// of the writes (a regular file DST): O_DIRECT writes into reserved
	// blocks are overwrites, which ext4 and XFS run in parallel.
	Preallocate bool
	Sparse
	// Changed restricts the copy to some ranges, or to what differs
	// (changed.go, sync.go).
	Changed
	// Observer, when not nil, sees the data as it is read, the holes, and
	// the barriers (observe.go).
	Observer Observer
	// SyncEvery, when positive, runs an fdatasync barrier about this often
	// while the copy goes, covering the chunks completed by then; the
	// Observer hears of each (Durable).
	SyncEvery time.Duration
	// Grid, when positive, keeps chunks from crossing a multiple of Grid
	// bytes from the range start, and rounds holes inward to it: each
	// Grid-sized piece of the range is then in exactly one chunk, whole,
	// as a block checksum needs. A multiple of both alignments.
	Grid int64
	// Check, when not nil, makes the run a read pass (check.go): nothing
	// is written; Files[FileDst] may be nil, or is read beside SRC.
	Check CheckFunc
	// Rate, when not nil, caps the bytes of the range moved per second
	// (pace.go says what counts). It may be shared by copies running at
	// once, and changed while they run (SetLimit, SetBurst): whoever
	// changes it calls the Budget's Wake, or the copy sees the change
	// within pacePoll. A request is never larger than its burst, which
	// must hold at least one alignment unit.
	Rate *rate.Limiter
	// SharedRate, when not nil, is a second cap like Rate, shared with
	// other copies (a batch's cap on all its jobs together); a request
	// waits until both let it through.
	SharedRate *rate.Limiter
	// IOPrio, when not 0, is the I/O priority of the copy's reads and
	// writes (ioprio.go), passed to the backend in Setup.
	IOPrio IOPrio
	// Blocking issues every read and write blocking, never tried without
	// blocking first: io_uring sends it straight to an io-wq worker
	// (IOSQE_ASYNC); the pool always blocks. Under a cgroup I/O throttle
	// this is what makes each byte count once: blk-throttle charges a bio
	// when it is submitted, and a non-blocking try that then fails with
	// EAGAIN (a bio that must be split, a loop device whose backing file
	// must allocate, a full tag set) is charged again when io_uring
	// retries it from a worker.
	Blocking bool
	// Progress, when not nil, is updated as the copy advances.
	Progress *Progress
	// OnFail, when not nil, is called once, on the engine's thread, when
	// the copy first fails (not when its context ends), after the
	// failure was recorded: the copy's error is already decided. The
	// engine then waits for the requests in flight; an end that may hold
	// them for long (a server that stalls, every range retrying with
	// backoff) is interrupted there, so that a failed copy ends at once.
	OnFail func(err error)
}

// Sparse says how holes and zeros are handled. The zero value copies every
// byte as data.
type Sparse struct {
	// MapHoles asks SRC (a regular file) where its data is, with
	// SEEK_DATA/SEEK_HOLE, range by range as the copy goes; holes are not
	// read.
	MapHoles bool
	// ZeroBlock, when positive, is the zero detection granularity: read
	// blocks that are all zeros are not written as data. A multiple of
	// DstAlign.
	ZeroBlock int
	// DstZeroed says DST already reads as zeros across the range (a new or
	// truncated file, or a device the caller vouches for): holes then need
	// no I/O. Otherwise they are zeroed with fallocate PUNCH_HOLE, then
	// ZERO_RANGE, then plain writes of zeros, whichever works first.
	DstZeroed bool
	// HoleAlign rounds hole boundaries inward (for example to a block
	// DST's logical block size, which fallocate on a device requires).
	HoleAlign int
}

// Progress is read by other goroutines while a copy runs. Every counter
// only grows. progress.go has the phase.
type Progress struct {
	Done atomic.Int64 // bytes of the range finished on DST: written, zeroed or left a hole
	Read atomic.Int64 // bytes whose reads completed
	// Writes counts the requests that wrote or zeroed DST, completed:
	// what a watcher of DST's disk counts as the copy's own besides the
	// bytes (a chunk whose zero runs are left as holes is written in
	// as many pieces as it has runs of data).
	Writes atomic.Int64
	// Done, split: written as data, made zero on DST, left as holes.
	Data, Zeroed, Holes atomic.Int64
	// Verified counts the bytes of the range checked by a read-back
	// verification, which runs after the copy.
	Verified atomic.Int64
	phase    atomic.Int32 // a Phase
}

// Stats is what a finished (or failed) copy did.
type Stats struct {
	Backend      string
	Caps         Caps
	BytesRead    int64
	BytesWritten int64 // written as data
	BytesHoles   int64 // not written: holes or zeros left as holes in DST
	BytesZeroed  int64 // made zero on DST by fallocate or by writing zeros
	// Contiguous is how many bytes from the range start are written with
	// no gap: where a stopped copy can be resumed.
	Contiguous int64
	// Synced: the fdatasync barrier completed. It also runs after a
	// failure or a stop, so that Contiguous is durable when it is true.
	Synced bool
	// InFlight is how many requests were still in flight when Run
	// returned: 0, except with an error matching ErrUndrained. Then DST may
	// still change beyond Contiguous (never within it: a chunk counts
	// there only once all its writes completed).
	InFlight int
	SyncStats
}

// unit is the least a request moves: both ends' alignment.
func (j *Job) unit() int { return int(align.LCM(int64(j.SrcAlign), int64(j.DstAlign))) }

// slotBuffers are the buffers of every slot the copy may use.
func (j *Job) slotBuffers() [][]byte {
	if j.Budget != nil {
		return j.Budget.Buffers()
	}
	return j.Buffers
}

// validate catches a Job the engine cannot run correctly; the caller (the
// CLI or copier) is expected to have refused such input already.
func (j *Job) validate() error {
	switch {
	case j.end(FileSrc) == nil || (j.end(FileDst) == nil && j.Check == nil):
		return fmt.Errorf("engine: job needs SRC and DST files")
	case j.comparing() && (j.BlockSize/2)%max(j.SrcAlign, j.DstAlign) != 0:
		return fmt.Errorf("engine: a compare's half block %d is not a multiple of alignments %d/%d", j.BlockSize/2, j.SrcAlign, j.DstAlign)
	case len(j.slotBuffers()) == 0:
		return fmt.Errorf("engine: job needs at least one buffer")
	case j.BlockSize <= 0 || j.SrcOff < 0 || j.DstOff < 0 || j.Length < 0:
		return fmt.Errorf("engine: block size %d, offsets %d/%d, length %d: out of range",
			j.BlockSize, j.SrcOff, j.DstOff, j.Length)
	case j.SrcAlign < 1 || j.DstAlign < 1:
		return fmt.Errorf("engine: alignments %d/%d must be at least 1", j.SrcAlign, j.DstAlign)
	case !align.IsAligned(int64(j.BlockSize), int64(j.SrcAlign)) || !align.IsAligned(int64(j.BlockSize), int64(j.DstAlign)):
		return fmt.Errorf("engine: block size %d is not a multiple of alignments %d/%d", j.BlockSize, j.SrcAlign, j.DstAlign)
	case !align.IsAligned(j.SrcOff, int64(j.SrcAlign)) || !align.IsAligned(j.DstOff, int64(j.DstAlign)):
		return fmt.Errorf("engine: offsets %d/%d are not aligned to %d/%d", j.SrcOff, j.DstOff, j.SrcAlign, j.DstAlign)
	case j.ZeroBlock < 0 || (j.ZeroBlock > 0 && !align.IsAligned(int64(j.ZeroBlock), int64(j.DstAlign))):
		return fmt.Errorf("engine: zero block %d is not a multiple of DST's alignment %d", j.ZeroBlock, j.DstAlign)
	case j.Grid < 0 || (j.Grid > 0 && (j.Grid%int64(j.SrcAlign) != 0 || j.Grid%int64(j.DstAlign) != 0)):
		return fmt.Errorf("engine: grid %d is not a multiple of alignments %d/%d", j.Grid, j.SrcAlign, j.DstAlign)
	case j.Rate != nil && j.Rate.Limit() != rate.Inf && j.Rate.Burst() < j.unit():
		return fmt.Errorf("engine: the rate cap's burst %d is smaller than the alignment %d", j.Rate.Burst(), j.unit())
	case j.SharedRate != nil && j.SharedRate.Limit() != rate.Inf && j.SharedRate.Burst() < j.unit():
		return fmt.Errorf("engine: the shared rate cap's burst %d is smaller than the alignment %d", j.SharedRate.Burst(), j.unit())
	case j.MaxRequest < 0:
		return fmt.Errorf("engine: request size %d", j.MaxRequest)
	case j.HoleAlign < 0:
		return fmt.Errorf("engine: hole alignment %d", j.HoleAlign)
	}
	for i, b := range j.slotBuffers() {
		if len(b) < j.BlockSize {
			return fmt.Errorf("engine: buffer %d holds %d bytes, less than a block (%d)", i, len(b), j.BlockSize)
		}
	}
	return nil
}
