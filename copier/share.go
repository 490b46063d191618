package copier

import (
	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/units"
)

// Sharing a busy host: a copy fits what it is given, a rate cap
// (Options.MaxRate) and the cgroup I/O limits on the disks behind SRC and
// DST, and then uses all of it.
//
//   - The cap paces requests as they are sent (engine/pace.go), one
//     request at a time, each at most 1/40 s of the cap (capSteps), in
//     whole pages once that large (fitGrain): in any
//     second no more than the cap and one request is sent, and what
//     completes in a second is that plus what was sent before it and is
//     still in flight, which the pacing keeps to the cap times the
//     latency. A small cap moves in small steps, not in bursts (8 MiB x 8
//     in flight at 10 MB/s would move 64 MiB, then stall for six seconds).
//     The cap cuts the requests (the budget's window), not the buffers,
//     which stay what a cap raised or lifted later moves whole. This is
//     the one statement of the capped buffers (capBuffers): blocks of a
//     MiB (capBlock), or 1/40 s of the cap when that is more, never more
//     than without the cap; and as many as one second of the cap fills
//     (capBufferedFor), two at least (a batch's: one for each job that
//     runs at once, batchSizes), never more than without the cap.
//     --max-rate 4M keeps 4 x 1 MiB, where it kept 8 x 1 MiB: its
//     requests are 100 KiB, and four slots of them keep the cap through
//     a latency of 100 ms (two, at 2 MiB/s and less, through 50 ms). A
//     block or depth the caller gave is kept. Blocks fitted to the
//     first cap stayed that small for good (from 1 B/s, 512 bytes: a
//     2 MiB rest after a lift went as 4096 requests).
//   - The slots out follow the latency the engine measures of the copy's
//     own requests (governor.capDepth): enough to keep the cap with half
//     as much again in hand, and one waiting for its turn. A fixed share
//     of the cap (it was 50 ms of it) caps the rate at what that share
//     moves in one latency: beside another load, a latency of 65 ms held
//     a 50 MiB/s cap to 38 MiB/s. More slots than that add nothing: the
//     pacing, not the depth, bounds what is sent.
//   - Under a cgroup limit, which the kernel enforces, no more is in
//     flight than the limit lets through in about a second: blk-throttle
//     queues what is over the limit inside the kernel, where io_uring does
//     not push back (liburing#293), and a copy that stops must wait for
//     all of it; a block is at most an eighth of a second of it. Every
//     request is issued blocking (engine.Job.Blocking): see blockingWhy.

// Sizes under a cap.
const (
	// capSteps: a request moves at most 1/capSteps of a second of the cap
	// (25 ms), so that two requests, a read overlapping a write, are 50 ms.
	capSteps = 40
	// capInFlight: before any latency is measured, 1/capInFlight of a
	// second of the cap is in flight (two blocks).
	capInFlight = 20
	// capHeadroom: the slots kept busy are the measured need times this,
	// so that the cap holds through a latency that varies.
	capHeadroom = 1.5
	// perByteDecay: the measured latency per byte falls by this factor per
	// sample (engine.SampleEvery) at most, so a spike is met at once and
	// forgotten over a couple of seconds.
	perByteDecay = 0.9
	// fitGrain: a block or request cut to a fraction of a cap or limit
	// is a multiple of this (and of the ends' alignment) once it is that
	// large: the page, and the block of most file systems. Cut to the
	// 512-byte sector only, 1/40 s of 8 MiB/s was 209408 bytes, and ext4
	// zeroed the partial blocks around every O_DIRECT write: the disk saw
	// five times the copy's writes, which the watcher took for others'
	// I/O, and a copy alone on an idle disk said others held it back.
	fitGrain = 4096
	// capBlock: under a cap, blocks are no larger than this unless 1/40
	// s of the cap is more (capBuffers). Not the blocks of no cap (8 MiB
	// x 8): a capped copy's buffers stay small.
	capBlock = 1 << 20
	// capBufferedFor: under a cap, the buffers hold at most what the cap
	// moves in this many seconds, capLeastBuffers blocks at least. The
	// pacing sends no more than the cap in a second, and the slots it
	// needs are the cap times the latency over a request (capDepth):
	// those of one second keep a cap of c MiB/s through a latency of
	// c/40 s. Beyond that a buffer only holds memory (the
	// cdi-importer's pod counts it against its limit).
	capBufferedFor = 1
	// capLeastBuffers: a read beside a write, and whole blocks two deep
	// when the cap is lifted.
	capLeastBuffers = 2
)

// capBuffers is how many buffers of block bytes a copy under a cap of
// bps bytes per second keeps (share.go's rule), at most depth: a second
// of the cap, capLeastBuffers at least.
func capBuffers(bps, block int64, depth int) int {
	n := bps * capBufferedFor / max(block, 1)
	return int(min(int64(depth), max(n, capLeastBuffers)))
}

// CapRequest is the most one request moves under a cap of bps bytes per
// second (Options.MaxRate, unless Options.BlockSize is given): 1/40 s of
// it, in whole 4 KiB pages once that large. Blocks are larger only to be
// what a cap raised or lifted later moves (share.go's rule of the capped
// buffers); a caller that must bound its buffers and never changes the
// cap (ringcp cdi-importer) may give its own block size when the cap's
// requests are that large anyway.
func CapRequest(bps int64) int64 { return fitSize(max(bps, 0)/capSteps, 1) }

// fitSize is n bytes (a fraction of a cap or limit) as a block or
// request: a multiple of lcm(unit, fitGrain) once it is at least that,
// else of unit, never less than one unit.
func fitSize(n, unit int64) int64 {
	unit = max(unit, 1)
	if g := align.LCM(unit, fitGrain); n >= g {
		return align.RoundDown(n, g)
	}
	return max(unit, align.RoundDown(max(n, 0), unit))
}

// blockingWhy is why requests under a cgroup limit are issued blocking.
// Found on Linux 6.18 with a v1 write_bps_device of 100 MiB/s on a loop
// device: io_uring's 8 MiB writes got 52 MB/s, 1 MiB ones 105 MB/s, and
// blkio.throttle.io_service_bytes counted 2 GiB for each 1 GiB copied.
// Traced (block_bio_queue, block_split, io_uring_queue_async_work):
// io_uring first issues a write without blocking (REQ_NOWAIT);
// submit_bio_noacct charges the whole bio to the throttle
// (blk_throtl_bio) and holds it there; only then does blk_mq_submit_bio
// find that it must be split (max_sectors_kb 1280), which a REQ_NOWAIT
// bio cannot be (bio_split_rw_at: -EAGAIN); io_uring reissues it from an
// io-wq worker, blocking, and the throttle charges it again. Every byte
// was paid for twice. Requests the disk takes whole are not enough: a
// loop device whose backing file must allocate, or a full tag set, also
// fail a non-blocking bio after the throttle charged it (1.25 MiB writes
// to a sparse-backed loop device were charged 1.2 times). The pool's
// pwrite always blocks, which is why it was not hit.
const blockingWhy = "io_uring issues every request blocking (IOSQE_ASYNC): a non-blocking first try that fails after the throttle has charged it (a request the kernel must split, a loop device that must allocate) is charged again when retried, which halved the rate"

// yieldBlock is the largest block of a copy that yields: a foreground read
// that arrives behind one of the copy's requests waits until it is done,
// so the requests are small (1 MiB takes under a millisecond on an SSD);
// large enough that the copy alone loses little (1 MiB x 8 moved 1.2 GB/s
// on this VM's virtio disk, 8 MiB x 8 1.4 GB/s).
const yieldBlock = 1 << 20

// IOLimit is a cgroup I/O limit on a disk the copy reads or writes, as
// this process's cgroups set it (cgroup v1 blkio.throttle, v2 io.max).
type IOLimit struct {
	Disk string `json:"disk"` // the whole disk, "MAJ:MIN"
	Side string `json:"side"` // "SRC", "DST" or "SRC and DST"
	// The limits the copy meets: reads on SRC's disk, writes on DST's;
	// 0 for none.
	ReadBPS   uint64 `json:"read_bps"`
	WriteBPS  uint64 `json:"write_bps"`
	ReadIOPS  uint64 `json:"read_iops"`
	WriteIOPS uint64 `json:"write_iops"`

	Files []string `json:"files"` // the files that set them
}

// rateString renders a cap for messages: "50.0 MiB/s".
func rateString(bps int64) string { return units.Format(bps) + "/s" }
