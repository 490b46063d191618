package copier

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// psiIO is the kernel's I/O pressure file.
var psiIO = "/proc/pressure/io"

// ownBio is the most one of the copy's requests counts for on a disk, as
// readReqs counts them (completed and merged, that is the bios sent): an
// O_DIRECT request of buffers in 4 KiB pages goes down in bios of 256
// pages. Counted as blocks (or as the disk's largest request, 4 MiB on
// this VM's virtio disk), the copy's own bios were taken for others':
// the good neighbour, alone on a loop device, left every slot for a
// slow start a quarter of a second into each copy. A copy whose bios are
// larger counts for more than it sent, which hides a little of others'
// requests while it runs (not before: yielder.before).
const ownBio = 1 << 20

// yieldDisk is a disk the copy uses, as the controller watches it.
type yieldDisk struct {
	stat string // its /sys/block/DISK/stat
	req  int64  // the bytes one of the copy's requests counts for there (ownBio at most)
	src  bool   // SRC is on it: the copy's reads count here
	dst  bool   // DST is on it: its writes count here
	reqs int64  // requests completed there before merging (readReqs), at the last tick
	// owed: requests seen there that the copy's counters have not
	// explained yet, at most what it can have in flight (others).
	owed int64
}

// others takes the disk's requests now (readReqs), those the copy counts
// as its own since the last tick, and the most of its own the disk can
// have seen that the copy has not counted yet: its requests in flight.
// It returns the requests that were others'. The copy counts a chunk
// when the chunk completes, the disk each of its requests as it does: a
// qcow2 chunk is many host reads, which under load take several ticks,
// and counted tick by tick they were taken for others'. So what the
// copy's counters leave unexplained is owed, up to its requests in
// flight, and only what goes beyond that is others': a foreground is
// seen once it sent that many more (a few ms of a disk's worth), the
// copy is never taken for one. A surplus (the copy counted more than
// the disk saw) pays what is owed, and is not kept beyond that: an
// estimate of the copy's own that runs high does not hide later others.
func (d *yieldDisk) others(reqs, mine, inFlight int64) int64 {
	if reqs < 0 || d.reqs < 0 {
		d.reqs, d.owed = reqs, 0
		return 0
	}
	d.owed = max(0, d.owed+reqs-d.reqs-mine)
	d.reqs = reqs
	others := max(0, d.owed-inFlight)
	d.owed -= others
	return others
}

// yielder runs the yield controller (yield.go) beside a copy.
type yielder struct {
	ctl      *aimd
	gov      *governor
	prog     *engine.Progress
	disks    []*yieldDisk
	probe    *os.File // SRC opened again with O_DIRECT, nil for no probes
	buf      *align.Buffers
	lo, hi   int64 // the probe reads' offsets lie in [lo, hi)
	probeLen int
	probed   int // probe reads in the last tick: the copy's own requests too
	// probes counts every probe read, for the batch's other watchers.
	probes atomic.Int64
	// read0, done0 and writes0 are Progress when it started; seen, in a
	// batch, what the other jobs' watchers had moved and probed at the
	// last tick (batchwatch_linux.go).
	read0, done0, writes0 int64
	seen                  map[*yielder]siblingCounts
	last                  time.Time
	read                  int64    // Progress.Read at the last tick
	done                  int64    // Progress.Done at the last tick
	writes                int64    // Progress.Writes at the last tick
	psi                   [2]int64 // "some" and "full" totals at the last tick, microseconds; -1 without PSI
	stopped               chan struct{}
	exited                chan struct{}
	beatExited            chan struct{} // the heartbeat's (pause.go)
	beating               []*governor   // the governors it beats for
	othersLast            bool          // the last tick saw others' requests (sample)
	// watchOnly: no --yield, the watch alone for the good neighbour:
	// others are told to the governor, nothing is cut.
	watchOnly bool
}

// startYield starts the controller when Options.Yield asks for it, or
// its watch alone when the good neighbour sizes the bytes in flight (no
// queue depth given: it hears of others from it); it returns nil
// otherwise. It first measures the probe's base on the disk as it is
// before the copy.
func (p *Plan) startYield() *yielder {
	if !p.opts.Yield && !p.gov.adapt {
		return nil
	}
	y := &yielder{ctl: newAIMD(p.QueueDepth), gov: p.gov, prog: p.opts.Progress, watchOnly: !p.opts.Yield,
		stopped: make(chan struct{}), exited: make(chan struct{}), beatExited: make(chan struct{})}
	y.watchDisks(p)
	y.openProbe(p)
	y.read0, y.done0, y.writes0 = y.prog.Read.Load(), y.prog.Done.Load(), y.prog.Writes.Load()
	batch := y.gov.batch()
	if batch != nil {
		batch.watch(y)
	}
	y.ctl.observe(y.before())
	y.gov.setSignals(y.ctl.others > 0, false)
	y.last, y.read, y.done, y.writes, y.seen = time.Now(), y.prog.Read.Load(), y.prog.Done.Load(), y.prog.Writes.Load(), y.siblingsNow()
	y.psi = readPSI()
	for _, d := range y.disks {
		d.reqs = readReqs(d.stat)
	}
	// The heartbeat is the job's and, in a batch, the batch's, whose
	// governor judges the shared budget's samples.
	y.beating = []*governor{y.gov}
	if batch != nil {
		y.beating = append(y.beating, batch)
	}
	for _, g := range y.beating {
		g.beatStart(time.Now())
	}
	go y.beat()
	go y.run()
	return y
}

// before is the disks as others have them before the copy starts: the
// probe's base, and their requests over yieldBefore at least, so that a
// copy started beside others starts as their neighbour, not with every
// slot. Others count as there from yieldOthersBefore requests a second
// (a journal commit of the copy's own DST is a request or two).
func (y *yielder) before() yieldSample {
	start := time.Now()
	sibs := y.siblingsNow()
	reqs := make([]int64, len(y.disks))
	for i, d := range y.disks {
		reqs[i] = readReqs(d.stat)
	}
	probe := y.probeNow(2 * yieldProbes)
	time.Sleep(yieldBefore - time.Since(start))
	s := yieldSample{dt: time.Since(start), probe: probe, some: -1, full: -1}
	var others int64
	sibsNow := y.siblingsNow()
	for i, d := range y.disks {
		if y.siblingWatches(d, sibsNow) {
			// A job of the batch already copies here: its watcher
			// speaks for this disk (30 ms of a running copy's requests,
			// counted as it completes them, are off by a block's bios
			// or more, where 3 requests are others).
			continue
		}
		mine := y.siblingReqs(d, d.req, sibs, sibsNow)
		if d.src { // the probe reads of SRC
			mine += int64(y.probed)
		}
		if now := readReqs(d.stat); now >= 0 && reqs[i] >= 0 {
			others += max(0, now-reqs[i]-mine)
		}
	}
	if rate := float64(others) / s.dt.Seconds(); rate >= yieldOthersBefore {
		s.others = rate
	}
	return s
}

// maxLoopHops bounds the loop devices followed down (a loop device on a
// file on another loop device is rare; a cycle cannot be made, but the
// walk never trusts that).
const maxLoopHops = 4

// run samples every tick until stop.
func (y *yielder) run() {
	defer close(y.exited)
	t := time.NewTicker(yieldTick)
	defer t.Stop()
	for {
		select {
		case <-y.stopped:
			return
		case <-t.C:
		}
		y.tick()
	}
}

// tick samples the disks and steps the controller.
func (y *yielder) tick() {
	since := y.last
	s := y.sample()
	if y.gov.paused(since, time.Now()) {
		// The process did not run for part of the tick (pause.go):
		// what the copy moved in it is no rate to cut from, nor its
		// time one yielded.
		return
	}
	if y.watchOnly {
		y.ctl.observe(s)
	} else {
		rate, depth := y.ctl.step(s)
		if depth >= y.ctl.maxDepth {
			depth = 0
		}
		y.gov.setYield(rate, depth)
	}
	others := y.ctl.others > 0
	y.gov.setSignals(others, others && y.ctl.suffering(s))
}

// beat runs the heartbeat of the watcher y (pause.go) until it stops.
func (y *yielder) beat() {
	defer close(y.beatExited)
	t := time.NewTicker(pauseBeat)
	defer t.Stop()
	for {
		select {
		case <-y.stopped:
			for _, g := range y.beating {
				g.beatEnd()
			}
			return
		case <-t.C:
			now := time.Now()
			for _, g := range y.beating {
				g.beat(now)
			}
		}
	}
}

// sample takes one tick's figures.
func (y *yielder) sample() yieldSample {
	return y.count(y.probeNow(yieldProbes))
}

// count takes the tick's figures but the probe, which took probe.
func (y *yielder) count(probe time.Duration) yieldSample {
	now := time.Now()
	read, done, writes := y.prog.Read.Load(), y.prog.Done.Load(), y.prog.Writes.Load()
	s := yieldSample{dt: now.Sub(y.last), moved: read - y.read, probe: probe, some: -1, full: -1}
	var others int64
	least := int64(y.gov.leastRequest())
	slots := y.gov.slotBytes()
	sibs := y.siblingsNow()
	for _, d := range y.disks {
		reqs := readReqs(d.stat)
		req := d.req
		if least > 0 {
			req = min(req, least)
		}
		mine := y.siblingReqs(d, req, y.seen, sibs)
		if d.src {
			mine += ceilDiv(read-y.read, req)
		}
		if d.dst {
			mine += ownWrites(done-y.done, writes-y.writes, req)
		}
		if d.src { // the probe reads of SRC land there too
			mine += int64(y.probed)
		}
		inFlight := ceilDiv(slots, req) // a watched disk holds SRC or DST
		if d.src && d.dst {
			inFlight *= 2
		}
		others += d.others(reqs, mine, inFlight)
	}
	if others < othersLeast(s.dt, probe) {
		others = 0 // a stray request (a journal commit, udev's probe), a few where reads are quick: nobody to make room for
	}
	// Others count from their second tick in a row. The copy's own
	// requests are estimated (a chunk written in pieces and zeroed
	// ranges go down as more requests than it can tell), and a tick's
	// excess of them is not a foreground, which sends tick after tick.
	seen := others > 0
	if !y.othersLast {
		others = 0
	}
	y.othersLast = seen
	s.others = float64(others) / max(s.dt.Seconds(), 1e-3)
	psi := readPSI()
	if psi[0] >= 0 && y.psi[0] >= 0 {
		us := float64(s.dt.Microseconds())
		s.some, s.full = float64(psi[0]-y.psi[0])/us, float64(psi[1]-y.psi[1])/us
	}
	y.last, y.read, y.done, y.writes, y.psi, y.seen = now, read, done, writes, psi, sibs
	return s
}

// stop ends the controller and returns what it did.
func (y *yielder) stop() *YieldReport {
	if y == nil {
		return nil
	}
	close(y.stopped)
	<-y.exited
	<-y.beatExited
	y.closeProbe()
	if batch := y.gov.batch(); batch != nil {
		batch.jobSignal(y.gov, nil) // the job ended: its watcher says nothing more
	}
	if y.watchOnly {
		return nil
	}
	rep := y.ctl.rep
	return &rep
}

// ownWrites is how many requests the copy's writes of bytes, in writes
// requests, count for on a disk where one counts for req bytes at most:
// the bytes in requests of req, or one for each piece when there are
// more pieces (a chunk with runs of zeros left as holes is written in
// many, each less than req). Not both added: a copy of whole requests
// then counted each write twice and took as many of a foreground's
// requests for its own. Writes larger than req mixed with pieces count
// short, on the side of seeing others.
func ownWrites(bytes, writes, req int64) int64 {
	return max(ceilDiv(bytes, req), writes)
}

func ceilDiv(n, d int64) int64 {
	if n <= 0 {
		return 0
	}
	return (n + d - 1) / d
}
