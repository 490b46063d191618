package engine

import (
	"os"
	"syscall"
	"time"
)

// FileID names the descriptors a copy uses.
type FileID uint8

// The files of a copy.
const (
	FileSrc     FileID = iota // SRC, opened read-only
	FileDst                   // DST, with O_DIRECT when the copy is direct
	FileDstTail               // DST without O_DIRECT, for an unaligned last block
	// NumFiles is how many ends a copy may have: the length of Files,
	// Fds and Ends.
	NumFiles
)

// Op is what a request does.
type Op uint8

// Request ops.
const (
	OpRead      Op = iota + 1 // read Len bytes at Off into the slot's buffer
	OpWrite                   // write from the slot's buffer at Off
	OpSync                    // fdatasync the file
	OpFallocate               // fallocate(Mode, Off, Len): punch or zero a range
)

func (op Op) String() string {
	switch op {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpSync:
		return "fdatasync"
	case OpFallocate:
		return "fallocate"
	}
	return "op?"
}

// Slots of the sync requests, which have no buffer: DST's, that of the
// descriptor that wrote an unaligned tail, and DST's periodic barrier
// (Job.SyncEvery) while the copy goes on.
const (
	SyncSlot         = -1
	SyncTailSlot     = -2
	SyncPeriodicSlot = -3
)

// Request is one I/O for a backend. Buf lies inside buffer Slot; Len and
// Mode are for OpFallocate, which has no buffer.
type Request struct {
	Op   Op
	File FileID
	Slot int
	Buf  []byte
	Off  int64
	Len  int64
	Mode uint32
}

// Completion reports one finished Request.
type Completion struct {
	Slot  int
	N     int           // bytes moved when Errno is 0
	Errno syscall.Errno // 0 on success
}

// Caps says what a backend does, for -v and --json.
type Caps struct {
	FixedBuffers bool   // buffers registered with the kernel once
	FixedFiles   bool   // descriptors registered with the kernel once
	Detail       string // ring flags, worker count...
}

// Backend moves bytes for the engine. It is driven from one goroutine.
type Backend interface {
	// Name is "io_uring" or "pool" or the like.
	Name() string
	// Caps reports how the backend runs.
	Caps() Caps
	// Submit queues requests and returns how many it took: the first n of
	// reqs will complete; the rest, when err is not nil, were never sent.
	// The engine never has more than Setup.Depth data requests plus two
	// syncs in flight, so Submit need not block.
	Submit(reqs []Request) (n int, err error)
	// Reap waits until at least atLeast completions are available and
	// copies up to len(out) of them into out. A positive timeout bounds
	// the wait: when it passes, Reap returns what is there, maybe nothing.
	// After an error the engine keeps reaping to drain what is in flight;
	// a backend that can never complete its requests again (a dead ring)
	// keeps failing.
	Reap(out []Completion, atLeast int, timeout time.Duration) (int, error)
	// Close releases the backend. Everything in flight has been reaped:
	// the engine never closes a backend it could not drain.
	Close() error
}

// ThreadFree is a Backend that any OS thread may drive: Open then leaves
// the calling goroutine free to run on any thread, as it was. The loop
// that drives a copy sleeps and wakes once per completion; a goroutine
// locked to its thread wakes only on that thread, so the Go scheduler
// hands its P over by waking the thread (and putting another to sleep),
// twice per completion. The pool serving a zstd qcow2 import of 1 GiB
// (9121 writes of 76 KiB on average, 8 slots, 2 cores, Linux 6.18 in a
// VM) took 2.83-3.14 s locked and 2.14-2.72 s not (5 runs each,
// interleaved); perf had startlockedm/stoplockedm under 31% of the
// import's context switches. A
// ring belongs to the thread that set it up (SINGLE_ISSUER), so the
// io_uring backend is not ThreadFree.
type ThreadFree interface {
	Backend
	ThreadFree()
}

// Files are the descriptors of a copy; DstTail may be nil.
type Files [NumFiles]*os.File

// Fds is the descriptor table a backend indexes by FileID: each file's
// descriptor, -1 where there is none.
type Fds [NumFiles]int

// Fds returns the files' descriptors.
func (f Files) Fds() Fds {
	var fds Fds
	for i, file := range f {
		fds[i] = -1
		if file != nil {
			fds[i] = int(file.Fd())
		}
	}
	return fds
}

// Setup is what a backend is built from.
type Setup struct {
	Files Files
	// Ends are every end of the copy, FileEnds for Files included; a
	// backend that moves data through descriptors only needs Files (and
	// calls DescriptorsOnly); one with the AnyEnd capability serves the
	// others as IOEnds.
	Ends    Ends
	Buffers [][]byte // one per slot, from anonymous mmap
	Depth   int      // slots, so data requests in flight at most
	// IOPrio, when not 0, is the I/O priority of every read and write
	// (Job.IOPrio): the backend applies it to each request (io_uring's
	// sqe->ioprio) or to the threads that make them (ioprio_set).
	IOPrio IOPrio
	// Blocking asks that reads and writes be issued blocking, never tried
	// without blocking first (Job.Blocking).
	Blocking bool
}

// NewBackend builds a backend. Run calls it on its locked OS thread.
type NewBackend func(Setup) (Backend, error)
