package engine

import (
	"slices"
	"time"
)

// Neighbour sizes the bytes a budget keeps in flight from what its copies
// measure, as a delay-based congestion controller (TCP Vegas, TCP-LP, BBR)
// sizes a network window: enough to keep the device busy, no standing
// queue. A device reaches its speed with some bytes in flight (about its
// bandwidth times its unloaded latency); what is sent beyond that only
// waits in its queue, where the small requests of others wait behind it
// (issue 27: 64 MiB in flight took a foreground's p99 from 0.15 to 35 ms).
//
// It learns the least latency of a request (per request size: a larger
// request takes longer on an idle device too), over neighbourLeastFor, and
// its solo speed: the best throughput while nobody else used the disk.
// Then, every Sample:
//
//   - it starts with every slot, today's window: a short copy is no
//     slower, and the first requests say the device's least latency;
//   - a latency over its least by the margin (the copy's own queue, or
//     another load's), or others suffering (Signals.Suffering), shrinks it
//     by a quarter;
//   - otherwise it probes now and then: a quarter down when the latency
//     is over its least by half the margin, kept when the throughput fell
//     by less than neighbourLoss; else a quarter up, kept when the
//     throughput grew by neighbourGain. A probe not kept makes the next
//     one wait twice as long;
//   - the floor: below neighbourFloor of its solo speed (and of a rate cap
//     under it) it grows again, whatever the latency, and shrinks no
//     further than there until it moves at 90% of its solo speed again:
//     a copy always moves.
//
// It is pure: Step takes a sample and returns the window. The budget's
// controller (copier's governor) calls it and combines its window with a
// rate cap's; tests feed it samples or run it against modelled devices.
type Neighbour struct {
	block   int
	slots   int
	levels  []Window              // the windows it chooses from, fewest bytes first
	at      int                   // the window now: levels[at]
	least   map[int]*leastLatency // by request size
	clock   time.Duration         // the samples' time, summed
	solo    float64               // bytes per second alone, the best seen
	best    float64               // the best seen, others there or not
	prev    level                 // the window before the last step up (a level), and its throughput
	probing int                   // the last change was a probe not yet judged: +1 up, -1 down
	steady  int                   // samples since the last change
	wait    int                   // samples to wait before the next probe
	flip    bool                  // the next probe goes down
	others  bool                  // Signals.Others at the last sample
	samples int
	floorAt int                   // the level the floor last grew it to: no shrink below; -1 for none
	hold    int                   // samples to let pass before judging a change
	hist    map[int]time.Duration // time spent at each window, for the median
	rep     NeighbourReport
}

// Signals are what the controller hears besides its own samples.
type Signals struct {
	// Others: someone else uses the copy's disks now (their requests in
	// the disk's statistics). The latency margin is then tighter.
	Others bool
	// Suffering: others wait longer than without the copy (a probe read,
	// I/O pressure beyond the copy's own).
	Suffering bool
	// Cap is the rate the caps allow now, bytes per second; 0 for none.
	// The floor never asks for more than it.
	Cap float64
}

type level struct {
	at  int // -1: none yet
	thr float64
}

// leastLatency keeps the least latency of the current and the last
// period of neighbourLeastFor: a least measured long ago (before a
// cgroup limit, on a device since grown busier for good) expires.
type leastLatency struct {
	cur, last time.Duration
	since     time.Duration // clock when cur began
}

const (
	neighbourMinRequest = 64 << 10 // the smallest request the window cuts to
	neighbourGain       = 1.05     // a step up stays when the throughput grew this much
	neighbourLoss       = 0.03     // a step down stays when the throughput fell less than this
	neighbourMargin     = 0.5      // latency over its least by this share, others present: a queue
	neighbourMarginSolo = 1.0      // alone: only a queue that doubles the latency
	neighbourSlack      = 50 * time.Microsecond
	neighbourFloor      = 0.5 // of solo speed, never given up
	neighbourLeastFor   = 10 * time.Second
	neighbourProbeEvery = 4  // samples at a window before probing up
	neighbourProbeMost  = 32 // the longest wait after probes that did not pay
	neighbourMinSample  = 4  // requests a sample needs to be judged
)

// NewNeighbour controls a budget of slots buffers of block bytes each,
// whose requests are multiples of unit. Its windows are two requests of
// 64 KiB, doubling up to two whole blocks, then one more block at a time
// up to every slot: few request sizes, each of whose least latency the
// startup learns.
func NewNeighbour(slots, block, unit int) *Neighbour {
	n := &Neighbour{block: block, prev: level{at: -1}, floorAt: -1,
		least: map[int]*leastLatency{}, hist: map[int]time.Duration{}, wait: neighbourProbeEvery}
	slots, unit = max(slots, 1), max(unit, 1)
	n.slots = slots
	pair := min(2, slots)
	for r := min(block, max(unit, alignDown(neighbourMinRequest, unit))); r < block; r *= 2 {
		n.levels = append(n.levels, Window{Depth: pair, Request: r})
	}
	for d := pair; d <= slots; d++ {
		n.levels = append(n.levels, Window{Depth: d})
	}
	n.at = len(n.levels) - 1
	return n
}

// Slots is how many buffers it sizes the window over.
func (n *Neighbour) Slots() int { return n.slots }

// Window is the depth and request size now.
func (n *Neighbour) Window() Window { return n.levels[n.at] }

func (n *Neighbour) bytesAt(i int) int {
	w := n.levels[i]
	if w.Request > 0 {
		return w.Depth * w.Request
	}
	return w.Depth * n.block
}

// Bytes is the window now, in bytes in flight.
func (n *Neighbour) Bytes() int { return n.bytesAt(n.at) }

// request is the size of the requests now.
func (n *Neighbour) request() int {
	if r := n.Window().Request; r > 0 {
		return r
	}
	return n.block
}

// up is the least window of at least bytes, one level up at least; down
// the largest of at most bytes, one level down at least.
func (n *Neighbour) up(bytes int) int {
	i := min(n.at+1, len(n.levels)-1)
	for i < len(n.levels)-1 && n.bytesAt(i) < bytes {
		i++
	}
	return i
}

func (n *Neighbour) down(bytes int) int {
	i := max(n.at-1, 0)
	for i > 0 && n.bytesAt(i) > bytes {
		i--
	}
	return i
}

// Step takes what the copies measured since the last sample, and returns
// the window.
func (n *Neighbour) Step(s Sample, sig Signals) Window {
	n.clock += s.Elapsed
	n.samples++
	if sig.Others {
		n.rep.OthersSeconds += s.Elapsed.Seconds()
	}
	if sig.Others != n.others {
		n.others, n.wait = sig.Others, neighbourProbeEvery // others came or went: probe soon
		n.floorAt = -1
	}
	n.hist[n.Bytes()] += s.Elapsed
	if s.Requests < neighbourMinSample || s.Bytes <= 0 || s.Elapsed <= 0 {
		return n.Window() // too little to judge: nothing was asked of the device
	}
	thr := float64(s.Bytes) / s.Elapsed.Seconds()
	base := n.learn(s, sig, thr)
	margin := neighbourMarginSolo
	if sig.Others {
		margin = neighbourMargin
	}
	over := func(m float64) bool {
		return base > 0 && s.Latency > time.Duration(float64(base)*(1+m))+neighbourSlack
	}
	v := verdict{thr: thr, queued: over(margin), excess: over(margin / 2),
		starved: n.starved(thr, sig), suffering: sig.Suffering,
		capped: sig.Cap > 0 && thr >= 0.9*sig.Cap, latency: s.Latency}
	n.account(s.Elapsed, thr, sig, v.starved)
	if n.hold > 0 {
		n.hold--
		return n.Window()
	}
	if thr >= 0.9*n.soloRate() {
		n.floorAt = -1 // as fast as alone: the load that starved it went
	}
	n.decide(v)
	return n.Window()
}

// learn keeps the least latency at the request size now, and the solo
// speed; it returns the least to judge the latency against.
func (n *Neighbour) learn(s Sample, sig Signals, thr float64) time.Duration {
	if sig.Cap == 0 || thr < sig.Cap*0.9 { // a rate cap's speed is not the device's
		n.best = max(n.best, thr)
		if !sig.Others {
			n.solo = max(n.solo, thr)
		}
	}
	ll := n.least[n.request()]
	if ll == nil {
		ll = &leastLatency{since: n.clock}
		n.least[n.request()] = ll
	}
	if n.clock-ll.since > neighbourLeastFor {
		ll.last, ll.cur, ll.since = ll.cur, 0, n.clock
	}
	if s.Least > 0 && (ll.cur == 0 || s.Least < ll.cur) {
		ll.cur = s.Least
	}
	if ll.cur > 0 && (n.rep.LeastLatency == 0 || ll.cur < n.rep.LeastLatency) {
		n.rep.LeastLatency = ll.cur
	}
	least := ll.cur
	if ll.last > 0 && ll.last < least {
		least = ll.last
	}
	return n.bounded(least)
}

// bounded: on an idle device a request takes no longer than a larger
// one, and at most r/q times as long as a smaller one of q bytes. A size
// first used under a queue (the copy's own, or another load's) learnt
// its least then; the least of another size may say better.
func (n *Neighbour) bounded(least time.Duration) time.Duration {
	r := n.request()
	for q, ll := range n.least {
		if q == r || ll.cur == 0 {
			continue
		}
		bound := ll.cur
		if q < r {
			bound = time.Duration(float64(ll.cur) * float64(r) / float64(q))
		}
		least = min(least, bound)
	}
	return least
}

// soloRate is the speed alone, or, for a copy that never was (others
// used the disk from its start), the best it moved: a floor it holds.
func (n *Neighbour) soloRate() float64 {
	if n.solo > 0 {
		return n.solo
	}
	return n.best
}

// starved: the copy moves less than the floor of its solo speed (and of
// the cap), where a larger window could help.
func (n *Neighbour) starved(thr float64, sig Signals) bool {
	floor := neighbourFloor * n.soloRate()
	if sig.Cap > 0 {
		floor = min(floor, 0.9*sig.Cap)
	}
	return thr < floor && n.at < len(n.levels)-1
}

// verdict is what one sample says.
type verdict struct {
	thr       float64 // bytes per second
	queued    bool    // the latency is over its least by the margin
	excess    bool    // by half of it: some queue, maybe not the copy's
	starved   bool    // under the floor
	suffering bool    // Signals.Suffering
	capped    bool    // at the rate cap: a larger window cannot move more
	latency   time.Duration
}

// decide moves the window after a sample that may be judged.
func (n *Neighbour) decide(v verdict) {
	n.steady++
	top := len(n.levels) - 1
	switch {
	case v.starved:
		n.probing, n.wait = 0, neighbourProbeEvery // things changed: probe soon again
		n.change(n.up(n.Bytes() * 5 / 4))
		n.floorAt = n.at
		n.hold = 1
	case v.queued || v.suffering:
		n.probing, n.wait = 0, neighbourProbeEvery
		if at := max(n.down(n.Bytes()*3/4), n.floorAt); at < n.at {
			n.change(at)
			n.hold = 1
		}
	case n.probing != 0:
		n.judge(v.thr)
	case v.capped && n.at > 0 && n.down(need(v)) < n.at:
		// What the cap lets through needs only its rate times the
		// latency in flight (Little's law), with headroom.
		n.change(n.down(need(v)))
		n.hold = 1
	case n.steady < n.wait:
	case n.at > 0 && (v.excess || n.flip || v.capped || n.at == top):
		// Some queue, not enough to shrink for, or every other probe:
		// does a smaller window move as much? (The least of a request
		// size first used over the knee says little.)
		n.flip = false
		n.probe(v.thr, -1, n.down(n.Bytes()*3/4))
	case n.at < top && !v.capped:
		n.flip = true
		n.probe(v.thr, +1, n.up(n.Bytes()*5/4))
	}
}

// need is the bytes in flight that carry the throughput now at its
// latency, with half again as headroom.
func need(v verdict) int { return int(1.5 * v.thr * v.latency.Seconds()) }

// probe tries another window, to be judged on the next sample.
func (n *Neighbour) probe(thr float64, dir, at int) {
	n.prev = level{n.at, thr}
	n.probing = dir
	n.change(at)
}

// judge keeps a probe's window when it paid: a step up that gained
// neighbourGain of throughput, a step down that lost under
// neighbourLoss. Otherwise the window goes back, and the next probe
// waits twice as long.
func (n *Neighbour) judge(thr float64) {
	paid := thr >= n.prev.thr*neighbourGain
	if n.probing < 0 {
		paid = thr >= n.prev.thr*(1-neighbourLoss)
	}
	n.probing = 0
	if paid {
		n.wait = neighbourProbeEvery
		return
	}
	n.change(n.prev.at)
	n.wait = min(2*n.wait, neighbourProbeMost)
}

// change sets a new window and starts counting the samples at it.
func (n *Neighbour) change(at int) {
	n.at = at
	n.steady = 0
}

// account keeps what the report says.
func (n *Neighbour) account(dt time.Duration, thr float64, sig Signals, starved bool) {
	if starved {
		n.rep.FloorSeconds += dt.Seconds()
	}
	if solo := n.soloRate(); sig.Others && solo > 0 && thr < 0.9*solo {
		n.rep.HeldSeconds += dt.Seconds()
		share := thr / solo
		if n.rep.LowestShare == 0 || share < n.rep.LowestShare {
			n.rep.LowestShare = share
		}
	}
}

// NeighbourReport is what the controller chose during a copy.
type NeighbourReport struct {
	// MinBytes, MedianBytes and MaxBytes are the bytes the window let in
	// flight, over the copy's time; LeastLatency the least a request took.
	MinBytes, MedianBytes, MaxBytes int64
	LeastLatency                    time.Duration
	// SoloRate is the best throughput while nobody else used the disk,
	// bytes per second; 0 when never measured.
	SoloRate float64
	// HeldSeconds is the time others used the disk and the copy moved
	// under 90% of its solo speed; LowestShare the least share of it then.
	HeldSeconds float64
	LowestShare float64
	// FloorSeconds is the time the floor (Floor of the solo speed) kept
	// the window from shrinking further.
	FloorSeconds float64
	Floor        float64
	// Samples is how many samples it heard: 0 for a copy shorter than
	// SampleEvery, which kept the window it started with.
	Samples int
	// OthersSeconds is the time others used the disks (Signals.Others).
	OthersSeconds float64
}

// Report is what the controller chose so far.
func (n *Neighbour) Report() NeighbourReport {
	r := n.rep
	r.SoloRate, r.Floor, r.Samples = n.solo, neighbourFloor, n.samples
	var total time.Duration
	sizes := make([]int, 0, len(n.hist))
	for b, d := range n.hist {
		sizes = append(sizes, b)
		total += d
	}
	if len(sizes) == 0 { // not one sample yet: the window it starts with
		w := int64(n.Bytes())
		r.MinBytes, r.MedianBytes, r.MaxBytes = w, w, w
		return r
	}
	slices.Sort(sizes)
	r.MinBytes, r.MaxBytes = int64(sizes[0]), int64(sizes[len(sizes)-1])
	var seen time.Duration
	for _, b := range sizes {
		seen += n.hist[b]
		if 2*seen >= total {
			r.MedianBytes = int64(b)
			break
		}
	}
	return r
}
