package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/internal/units"
)

// Read passes (Checksum, Compare, and a copy's read-back, resumed checksum
// and compare) read whole 4 MiB cells per chunk, so their blocks cannot
// shrink to a cgroup limit as a copy's do (share.go). Their requests do:
// a cell is read in several requests of at most an eighth of a second of
// the limit, no more than a second of it in flight, each issued blocking
// (blockingWhy). A stop then waits for what the kernel holds back, a
// second at most, as a copy's does; before, a pass under a 5 MB/s limit
// kept 8 MiB requests 8 deep in the throttle's queue and took 6 s to stop.
// decideSizes fits them (sizes.go), and the engine keeps to the request
// (engine.Job.MaxRequest).

// ioLimits are cgroup limits a copy or its read passes meet: the least
// bytes-per-second limit (limitWhy says whose) and the least
// requests-per-second one; 0 for none.
type ioLimits struct {
	limit    int64
	limitWhy string
	iops     int64
}

// add tightens f to a limit of bps bytes and iops requests per second (0:
// none), set by why.
func (f *ioLimits) add(bps, iops uint64, why string) {
	if bps > 0 && (f.limit == 0 || int64(min(bps, 1<<62)) < f.limit) {
		f.limit, f.limitWhy = int64(min(bps, 1<<62)), why
	}
	if iops > 0 && (f.iops == 0 || int64(min(iops, 1<<62)) < f.iops) {
		f.iops = int64(min(iops, 1<<62))
	}
}

// readFit is how a read pass fits the cgroup read limits of the disks it
// reads.
type readFit struct {
	request int  // the most one read moves; 0: a block
	depth   int  // the most slots out; 0: every buffer
	limited bool // a limit applies: reads are issued blocking
	note    string
}

// fitReads fits reads to f's limit (bytes and requests per second), in
// units of unit, over bufs buffers.
func fitReads(f ioLimits, unit int64, bufs int) readFit {
	if f.limit == 0 && f.iops == 0 {
		return readFit{}
	}
	rf := readFit{limited: true, depth: bufs}
	if f.limit > 0 {
		rf.request = int(fitSize(f.limit/8, unit))
		rf.depth = min(rf.depth, max(1, int(f.limit/int64(rf.request))))
		rf.note = fmt.Sprintf("reads of at most %s, %d in flight: an eighth and a second of %s/s (%s)",
			units.Format(int64(rf.request)), rf.depth, units.Format(f.limit), f.limitWhy)
	}
	if f.iops > 0 && int(f.iops) < rf.depth {
		rf.depth = max(1, int(f.iops))
		rf.note = fmt.Sprintf("%d reads in flight: what the cgroup lets through in a second", rf.depth)
	}
	return rf
}
