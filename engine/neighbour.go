package engine

import "time"

// Neighbour sizes the bytes a budget keeps in flight, as a congestion
// controller sizes a network window: enough to keep the device busy, no
// standing queue. A device reaches its speed with some bytes in flight;
// what is sent beyond that only waits in its queue, where the small
// requests of others wait behind it (issue 27: 64 MiB in flight took a
// foreground's p99 from 0.15 to 11 ms on this VM's disk, and the
// foreground's reads waited behind whole requests there, so the size of
// a request counts as well as their number).
//
// Alone on the disk (Signals.Others false) the copy keeps every slot, as
// before: nobody waits behind its queue, and a copy alone is as fast as
// it was. That speed (solo) is what it aims at a share (Keep) of once
// others use the disk: 3/4 by default, half with --yield. More would add
// little for the copy and a longer queue for the others; less would cost
// the copy more than its share. Beside others:
//
//   - grow (slow start): it drops to the least window (one request of
//     neighbourMinRequest) and doubles it every judgement (a window's
//     throughput over a few of its samples) until a window moves the
//     share of solo, or a doubling no longer pays (neighbourGain, in
//     neighbourGrowTries judgements: one may be a stall's): the
//     others take so much of the disk that the share of solo is out of
//     reach, and the best beside them (the larger of the last two
//     windows) is what it keeps a share of instead. A copy that was
//     never alone has no solo speed: it grows until doubling no longer
//     pays, and keeps a share of that best;
//   - search: the least window that moves the share lies between the
//     last window under it and the first over it: it halves that range
//     a judgement at a time, over levels finer than doubling;
//   - steady: it holds that window. A window that moves under 90% of
//     its share neighbourPersist times in a row grows again from where
//     it is (others took more of the disk); every neighbourProbeEvery
//     judgements it tries one step down, kept when it still moves the
//     share (others took less), and what it knows to move under the
//     share is forgotten every neighbourForgetEvery judgements, so that
//     a step down is tried again. It never grows just to look: only a
//     share of a best beside others (not of solo) is measured again,
//     every neighbourRecheckEvery judgements, so rarely that the
//     windows past the share it tries then are a sliver of the time,
//     or soon when the window held moves neighbourBestWrong times it
//     neighbourPersist judgements in a row (the best was a stall's);
//   - the floor: under neighbourFloor of its speed alone (or of the most
//     it sustained, for a copy that was never alone: a best that a second
//     of the windows held after it bore out) neighbourPersist times in a
//     row, it doubles the window, whatever else: a copy always moves.
//
// Samples come every NeighbourEvery (Budget.SetSampleEvery), and a window
// is judged over 50 ms and two of its windows of bytes at least: a copy
// of a few seconds settles in a few hundred milliseconds.
//
// It is pure: Step takes a sample and the signals and returns the window;
// Hear takes the signals between samples. The budget's controller
// (copier's governor) calls them and combines the window with a rate
// cap's; tests feed it samples or run it against modelled devices.
type Neighbour struct {
	block    int
	slots    int
	levels   []Window // the windows it chooses from, fewest bytes first
	at       int      // the window now: levels[at]
	keep     float64  // the share of solo (or of the best beside others) it aims at
	phase    nbPhase
	thrAt    []float64 // bytes per second each window moved, this episode (0: not tried)
	peakAt   []float64 // the most one judgement of each window moved, this episode (grow)
	tries    int       // judgements of the window now, since it changed
	lastAt   []int     // the judgement (count) each window was last judged at
	judged   int       // judgements beside others, so far
	best     float64   // the most a window moved beside others where growing stopped paying (0: not found)
	bestEver float64   // the most best was, every episode, as a window held sustained it (the floor's, for a copy never alone)
	capAt    float64   // the cap the best was learnt under (0: not a cap's)
	preBest  float64   // the best beside others when the cap came (0: none), for when it goes
	preGrow  bool      // the cap came during a growth that had not found the best yet
	from     int       // grow: the level it grew from (-1: from the start)
	lo, hi   int       // the greatest level known to move under the aim (-1: none), the least known to move it
	steady   int       // judgements since the last change, steady
	since    int       // judgements since the best was measured or what is short forgotten, steady
	down     bool      // the last change was a step down, steady, to be judged
	under    int       // judgements in a row under the floor
	short    int       // judgements in a row under its share, steady
	wrong    int       // judgements in a row, steady, that moved neighbourBestWrong times the best
	thr      float64   // the last judgement's throughput
	others   bool      // Signals.Others as last heard
	solo     float64   // bytes per second alone at every slot (smoothed), the best seen
	soloAt   float64   // the smoothed throughput alone now
	fell     int       // judgements in a row alone under 90% of solo
	least    time.Duration
	acc      accum
	held     accum                 // what the copy moved beside others since it last grew (sustain)
	few      Sample                // samples of too few requests, held back for the next (fold)
	hist     map[int]time.Duration // time spent at each window, for the median
	rep      NeighbourReport
}

// Signals are what the controller hears besides its own samples.
type Signals struct {
	// Others: someone else uses the copy's disks now (their requests in
	// the disk's statistics).
	Others bool
	// Suffering: others wait longer than without the copy (a probe read,
	// I/O pressure beyond the copy's own): it tries a smaller window
	// sooner.
	Suffering bool
	// Cap is the rate the caps allow now, bytes per second; 0 for none.
	// The floor never asks for more than it.
	Cap float64
}

// nbPhase is what the controller is doing.
type nbPhase int

const (
	nbAlone  nbPhase = iota // nobody else: every slot
	nbGrow                  // others came: doubling from the least window
	nbSearch                // halving the range the least window that moves the aim lies in
	nbSteady                // the least window that moves the aim
)

const (
	// NeighbourEvery is how often the controller wants a sample.
	NeighbourEvery = 25 * time.Millisecond
	// NeighbourKeep is the share of its speed alone (of the best beside
	// others, when that is less) the window aims at by default;
	// NeighbourYieldKeep with --yield.
	NeighbourKeep      = 0.75
	NeighbourYieldKeep = 0.5

	neighbourMinRequest = 128 << 10 // the smallest request the window cuts to
	neighbourOneMost    = 1 << 20   // the largest window of one request, with more slots than one
	neighbourGain       = 1.10      // a doubling that grew the throughput less ends the growth
	// neighbourGrowTries: judgements of a doubled window before it is
	// said not to pay, the most of them counting. This VM's disk stalls
	// for 100-300 ms every second or so (judgements of 4 to 90 MB/s
	// between ones of 300 to 500): one of them ended the growth at the
	// least window, whose speed then set the aim (issue 27).
	neighbourGrowTries = 2
	// neighbourBestWrong: a window held that moves this many times the
	// best beside others, neighbourPersist judgements in a row, says the
	// best was a stall's, and it is measured again. Not less: others
	// that took less are the recheck's, and a best measured again in a
	// burst of the host's cache set a floor of half the burst that kept
	// the window growing (40 MiB beside fio).
	neighbourBestWrong = 2
	// neighbourStale: judgements after which what a window moved is
	// forgotten, its next judgement a figure afresh (not smoothed into
	// one of a stall long gone).
	neighbourStale      = neighbourProbeEvery
	neighbourFloor      = 0.5 // of solo speed, never given up
	neighbourProbeEvery = 10  // judgements at a window, steady, before trying one step down
	// neighbourForgetEvery: judgements, steady, after which the windows
	// known to move under the aim may be tried again.
	neighbourForgetEvery = 40
	// neighbourRecheckEvery: judgements, steady, after which a best
	// beside others is measured again (its growth past the aim's window
	// takes a few judgements: under 1% of the time, so that a
	// foreground's 99th percentile is not set by it).
	neighbourRecheckEvery = 400
	neighbourMinSample    = 4 // requests a sample needs to be judged
	// A window's throughput is judged over neighbourJudge and
	// neighbourJudgeWindows of its bytes at least (neighbourJudgeMost
	// at most).
	neighbourJudge        = 50 * time.Millisecond
	neighbourJudgeWindows = 2
	neighbourJudgeMost    = 250 * time.Millisecond
	neighbourSmooth       = 0.3 // weight of a new judgement in a window's throughput
	// neighbourPersist is how many judgements in a row must say the
	// window moves under its floor, or its share, before it grows: on a
	// shared machine one judgement may be half or twice the next.
	neighbourPersist = 3
	// neighbourUncap: a cap raised by more than this is a new one, and
	// the best the old one set is forgotten.
	neighbourUncap = 1.25
	// neighbourSoloFell: judgements in a row alone under 90% of the
	// speed alone (at least half a second: longer than the watcher takes
	// to see others come) after which it fell for good.
	neighbourSoloFell = 10
	// neighbourSustain: the time a window must be held beside others
	// before what it moved confirms a best (sustain): longer than a
	// burst of the host's cache and the slow time that pays for it.
	neighbourSustain = time.Second
	// neighbourPaced: the share of a judgement's time the copy waited on
	// the rate cap (Sample.Paced) that says the cap held it back.
	neighbourPaced = 0.5
)

// NewNeighbour controls a budget of slots buffers of block bytes each,
// whose requests are multiples of unit. It starts alone, with every
// slot.
func NewNeighbour(slots, block, unit int) *Neighbour {
	n := &Neighbour{block: block, slots: max(slots, 1), keep: NeighbourKeep, from: -1, lo: -1, hist: map[int]time.Duration{}}
	n.levels = neighbourLevels(n.slots, block, max(unit, 1))
	n.thrAt = make([]float64, len(n.levels))
	n.peakAt = make([]float64, len(n.levels))
	n.lastAt = make([]int, len(n.levels))
	n.at = len(n.levels) - 1
	return n
}

// SetKeep sets the share of its speed alone (or of the best beside
// others, when less) that the window aims at (NeighbourKeep,
// NeighbourYieldKeep), from 0.1 to 1.
func (n *Neighbour) SetKeep(share float64) { n.keep = min(max(share, 0.1), 1) }

// Slots is how many buffers it sizes the window over.
func (n *Neighbour) Slots() int { return n.slots }

// Window is the depth and request size now.
func (n *Neighbour) Window() Window { return n.levels[n.at] }

func (n *Neighbour) bytesAt(i int) int { return levelBytes(n.levels[i], n.block) }

// Bytes is the window now, in bytes in flight.
func (n *Neighbour) Bytes() int { return n.bytesAt(n.at) }

// Hear takes what the watcher says of others between samples: others
// that came make it grow from the least window at once, others gone give
// it every slot back.
func (n *Neighbour) Hear(sig Signals) Window {
	if sig.Others == n.others {
		return n.Window()
	}
	n.others = sig.Others
	if !sig.Others {
		n.phase, n.fell = nbAlone, 0
		n.change(len(n.levels) - 1)
		return n.Window()
	}
	n.best, n.lo, n.preBest, n.preGrow = 0, -1, 0, false
	n.regrow(0, -1)
	return n.Window()
}

// levelOf is the least level of at least bytes, the top if none.
func (n *Neighbour) levelOf(bytes int) int {
	for i := range n.levels {
		if n.bytesAt(i) >= bytes {
			return i
		}
	}
	return len(n.levels) - 1
}

// regrow starts growing at level at, from level from (-1: a new
// growth, whose figures start afresh).
func (n *Neighbour) regrow(at, from int) {
	if from < 0 {
		clear(n.thrAt)
		clear(n.peakAt)
		n.rep.Restarts++
	}
	n.growFrom(at, from)
}

// growFrom starts growing at level at, from level from (-1: none), with
// the figures it has.
func (n *Neighbour) growFrom(at, from int) {
	n.phase, n.from = nbGrow, from
	n.held = accum{}
	n.change(at)
}

// Step takes what the copies measured since the last sample, and the
// signals, and returns the window.
func (n *Neighbour) Step(s Sample, sig Signals) Window {
	n.Hear(sig)
	n.rep.Samples++
	if sig.Others {
		n.rep.OthersSeconds += s.Elapsed.Seconds()
	}
	n.hist[n.Bytes()] += s.Elapsed
	s, ok := n.fold(s)
	if !ok {
		return n.Window() // too little to judge yet
	}
	if s.Least > 0 && (n.least == 0 || s.Least < n.least) {
		n.least = s.Least
	}
	n.uncap(sig)
	thr, ok := n.measure(s)
	if !ok {
		return n.Window()
	}
	n.thr = thr
	// Capped: it moved the cap, or waited on it (Sample.Paced) half the
	// time at least. A copy that waits for its cap is held back by the
	// cap, not by others, whatever bytes finished in the judgement.
	capped := sig.Cap > 0 && (thr >= 0.9*sig.Cap || n.acc.paced >= neighbourPaced*n.acc.judged.Seconds())
	if !capped { // a rate cap's speed says nothing of the window's
		n.learn(thr)
	}
	starved := !capped && n.starved(n.now(thr), sig)
	n.account(n.acc.judged, thr, starved, capped)
	if starved {
		n.under++
	} else {
		n.under = 0
	}
	switch {
	case n.phase == nbAlone:
	case n.under >= neighbourPersist && n.phase != nbGrow: // growing doubles anyway
		// And again each judgement while it stays under; held there
		// (not searched under) until others take less.
		n.phase, n.lo, n.hi, n.since = nbSteady, n.at, n.levelOf(2*n.Bytes()), 0
		n.change(n.hi)

	case capped:
		// A larger window moves no more under the cap: the least one
		// that carries it will do. What the cap let it move is the
		// best beside the others (the share and the floor count from
		// it), and the step down is judged as any: a window that no
		// longer moves its share steps back up, and one known not to
		// carry the cap is not tried again.
		if n.capAt == 0 { // the cap came: what it knew without it, for when it goes
			n.preBest, n.preGrow = n.best, n.phase == nbGrow && n.best == 0
		}
		n.phase = nbSteady
		n.best = max(n.best, min(thr, sig.Cap)) // a burst after a wait measures over the cap
		n.capAt = sig.Cap
		n.bestEver = max(n.bestEver, n.best)
		if below := n.at - 1; below >= 0 && (n.thrAt[below] == 0 || n.thrAt[below] >= 0.9*sig.Cap) {
			n.hi = n.at // where a step down that does not carry it goes back to
			n.change(below)
			n.down = true
		}
	case n.phase == nbGrow:
		n.grow()
	case n.phase == nbSearch:
		n.search()
	default:
		n.hold(sig)
	}
	return n.Window()
}

// uncap forgets a best the cap set once the cap is lifted or raised
// (Plan.SetMaxRate, --yield's cut): it was the cap's, not the most the
// copy moves beside others, and held until the best was measured again
// (400 judgements) the window that carried the old cap. The best it
// knew before the cap came is still the most it moves beside them: it
// takes that back and holds the window now, which grows as any that
// moves under its share. A growth the cap came in the middle of goes on
// from the window now, with what its windows moved. Only with neither
// (a copy capped from its start) does it grow afresh, as when the best
// is measured again. Before, every lift grew afresh from the window the
// cap had stepped down to, with no best to aim at: each time --yield's
// cut was lifted or raised by more than neighbourUncap (up to 8 times in
// a 2 GiB copy beside fio), the window grew past what the foreground
// bears, and the next cut came (TestNeighbourYieldCuts). A cap raised
// by less than neighbourUncap (--yield's cut creeps up a little every
// tick) is still the cap it was.
func (n *Neighbour) uncap(sig Signals) {
	if n.capAt == 0 || sig.Cap > 0 && sig.Cap <= neighbourUncap*n.capAt {
		return
	}
	n.capAt = 0
	if n.phase == nbAlone {
		return
	}
	switch best, paused := n.preBest, n.preGrow; {
	case best > 0:
		n.best, n.lo, n.hi = best, -1, n.at
	case paused:
		n.best, n.lo = 0, -1
		n.growFrom(n.at, -1)
	default:
		n.best, n.lo = 0, -1
		n.regrow(n.at, -1)
	}
	n.preBest, n.preGrow = 0, false
}

// fold holds back samples of fewer than neighbourMinSample requests and
// adds them to the next, until together they hold enough, or cover
// neighbourJudgeMost: on a slow disk (large requests, a few a second)
// every sample holds fewer, and dropped they left nothing to judge. Time
// in which nothing was asked of the device is not judged.
func (n *Neighbour) fold(s Sample) (Sample, bool) {
	f := &n.few
	f.Elapsed += s.Elapsed
	f.Requests += s.Requests
	f.Bytes += s.Bytes
	f.Busy += s.Busy
	f.Paced += s.Paced
	if s.Least > 0 && (f.Least == 0 || s.Least < f.Least) {
		f.Least = s.Least
	}
	if f.Requests < neighbourMinSample && f.Elapsed < neighbourJudgeMost {
		return Sample{}, false
	}
	out := *f
	*f = Sample{}
	return out, out.Requests > 0 && out.Elapsed > 0
}

// measure adds a sample to what the window now moved, and returns its
// throughput once there is enough to judge it: the first sample after a
// change is the last of the window before (its requests still complete),
// and a window is judged over neighbourJudge and neighbourJudgeWindows
// windows of bytes at least, as chunks complete in bursts.
func (n *Neighbour) measure(s Sample) (float64, bool) {
	a := &n.acc
	if a.warm {
		a.warm = false
		return 0, false
	}
	a.bytes += s.Bytes
	a.time += s.Elapsed
	a.waited += s.Paced
	if a.time < neighbourJudge || a.bytes < int64(neighbourJudgeWindows*n.Bytes()) && a.time < neighbourJudgeMost {
		return 0, false
	}
	thr := float64(a.bytes) / a.time.Seconds()
	a.judged, a.paced = a.time, min(a.waited.Seconds(), a.time.Seconds())
	a.bytes, a.time, a.waited = 0, 0, 0
	return thr, true
}

// learn keeps the throughput of the window now and the best, or alone
// the solo speed.
func (n *Neighbour) learn(thr float64) {
	if n.phase == nbAlone {
		n.learnSolo(thr)
		return
	}
	n.judged++
	if n.tries == 0 && n.judged-n.lastAt[n.at] > neighbourStale {
		n.thrAt[n.at] = 0 // a figure from long ago (a stall's, a load's since gone) starts afresh
	}
	n.thrAt[n.at] = smooth(n.thrAt[n.at], thr)
	n.peakAt[n.at] = max(n.peakAt[n.at], thr)
	n.lastAt[n.at] = n.judged
	n.tries++
	n.sustain(thr)
}

// sustain adds a judgement to what the copy moved since it last grew
// (the window it holds, and the steps down it tries), and once that
// covers neighbourSustain confirms the best beside others as far as it
// bears it out: the window held aims at its share of the best, so what
// it sustained over its share is a best it can move (never more than
// the best measured). Only a best so confirmed sets the floor of a copy
// never alone (bestEver): this VM's disk moves bursts of the host's
// cache (1.9 to 3.4 GB/s judged over 50 ms, on a disk of 1.1), and a
// best measured in one set a floor over what the disk moves at any
// window, which then doubled the window every judgement, up to every
// slot (a foreground's p99 7x its own). A second holds the burst and
// what the host pays for it after. Confirmed, the floor stays when a
// load grows later: what a copy was seen to sustain is what others may
// not take from it.
func (n *Neighbour) sustain(thr float64) {
	if n.phase == nbGrow {
		return
	}
	h := &n.held
	h.bytes += int64(thr * n.acc.judged.Seconds())
	h.time += n.acc.judged
	if h.time < neighbourSustain || n.best <= 0 {
		return
	}
	rate := float64(h.bytes) / h.time.Seconds()
	n.bestEver = max(n.bestEver, min(n.best, rate/n.keep))
}

// learnSolo keeps the speed alone: the most the smoothed throughput
// alone was, until it stays under 90% of that neighbourSoloFell
// judgements in a row alone; it then follows the smoothed throughput
// down. A copy's first judgements may be a burst many times its speed
// (a host's cache taking the first writes); kept for good, the copy
// beside others aimed at a share of it it never reached and kept every
// slot for a floor of half of it. A few judgements under it (others
// the watcher has not seen yet) do not lower it.
func (n *Neighbour) learnSolo(thr float64) {
	n.soloAt = smooth(n.soloAt, thr)
	switch {
	case n.soloAt >= n.solo:
		n.solo, n.fell = n.soloAt, 0
	case n.fell >= neighbourSoloFell:
		n.solo = n.soloAt
	case n.soloAt < 0.9*n.solo:
		n.fell++
	default:
		n.fell = 0
	}
}

func smooth(avg, v float64) float64 {
	if avg <= 0 {
		return v
	}
	return avg + neighbourSmooth*(v-avg)
}

// now is the throughput of the window now, smoothed.
func (n *Neighbour) now(thr float64) float64 {
	if n.phase != nbAlone && n.thrAt[n.at] > 0 {
		return n.thrAt[n.at]
	}
	return thr
}

// aim is the throughput the window aims at: its share of the speed
// alone, or of the best beside others when that is less (or when the
// copy was never alone); 0 while neither is known.
func (n *Neighbour) aim() float64 {
	ref := n.solo
	if n.best > 0 && (ref == 0 || n.best < ref) {
		ref = n.best
	}
	return n.keep * ref
}

// grow doubles the window until it moves the aim, or until a doubling
// does not pay: the best beside the others is then known, and what the
// windows tried moved. Either way the least window that moves the aim is
// searched for below.
func (n *Neighbour) grow() {
	top := len(n.levels) - 1
	if aim := n.aim(); aim > 0 && n.thrAt[n.at] >= aim {
		n.bisect(max(n.from, n.lo), n.at)
		return
	}
	// The most a judgement of the window now moved against the most one
	// of the window it grew from did: a stall's judgement of either is
	// not the figure, and neither is the luck of one side only.
	paid := n.from < 0 || n.peakAt[n.at] >= n.peakAt[n.from]*neighbourGain
	if !paid && n.tries < neighbourGrowTries && n.at < top {
		return // one judgement may be a stall's: judged again
	}
	if !paid || n.at == top {
		// The best is where the growth stopped: the larger of the last
		// two windows, as they move now (an earlier sample's luck, or
		// a load since grown, would set an aim no window reaches).
		n.best = n.thrAt[n.at]
		if n.from >= 0 {
			n.best = max(n.best, n.thrAt[n.from])
		}
		n.since = 0
		n.settle()
		return
	}
	if n.aim() > 0 {
		n.lo = n.at // under the aim
	}
	n.from = n.at
	n.change(n.levelOf(2 * n.Bytes()))
}

// settle searches, once the best is known, between the windows tried:
// the least that moves the aim, and the greatest under it below that one
// (the aim may be less than the one they were judged under before).
func (n *Neighbour) settle() {
	aim := n.aim()
	hi := n.at
	for i := range n.at {
		if n.thrAt[i] > 0 && n.thrAt[i] >= aim {
			hi = i
			break
		}
	}
	lo := -1
	for i := hi - 1; i >= 0; i-- {
		if n.thrAt[i] > 0 && n.thrAt[i] < aim {
			lo = i
			break
		}
	}
	n.bisect(lo, hi)
}

// bisect searches for the least window that moves the aim between lo,
// under it (-1: none known), and hi, which moves it: the window halfway,
// judged next; steady at hi once nothing lies between.
func (n *Neighbour) bisect(lo, hi int) {
	n.lo, n.hi = lo, hi
	if hi-lo <= 1 {
		n.phase, n.since = nbSteady, 0
		n.change(hi)
		return
	}
	n.phase = nbSearch
	n.change(lo + (hi-lo)/2)
}

// search judges the window halfway: it moves the aim, and the least
// window lies at or below it, or not, and it lies above.
func (n *Neighbour) search() {
	if n.thrAt[n.at] >= n.aim() {
		n.bisect(n.lo, n.at)
	} else {
		n.bisect(n.at, n.hi)
	}
}

// hold keeps the window, steady: a window that no longer moves its aim
// grows from where it is; now and then it tries a step down; a best
// beside others is measured again, rarely.
func (n *Neighbour) hold(sig Signals) {
	n.steady++
	n.since++
	aim := n.aim()
	judged := n.down
	n.down = false
	if n.thrAt[n.at] < 0.9*aim {
		n.short++
	} else {
		n.short = 0
	}
	if n.best > 0 && n.thr > n.best*neighbourBestWrong {
		n.wrong++
	} else {
		n.wrong = 0
	}
	top := len(n.levels) - 1
	switch {
	case judged && n.thrAt[n.at] < aim:
		n.lo = n.at // the step down does not move the aim: back
		n.change(n.hi)
	case judged:
		n.hi = n.at
	case n.short >= neighbourPersist && n.at < top:
		// Others took more of the disk, or the aim was a lucky
		// judgement's: a step up, judged as growing.
		n.lo = n.at
		n.regrow(n.at+1, n.at)
	case n.wrong >= neighbourPersist:
		// The window moves far more than the best beside others: that
		// was a stall's. Measured again, from here: held, a best too
		// low is an aim the least window moves. Not on one judgement's
		// word, nor on the smoothed figure it lifts: a burst of the
		// host's cache (three times the disk's speed, for a judgement
		// or two) measured the best again every time, from a window
		// held where the aim was met, and the growth after it judged
		// the bursts.
		n.best, n.lo = 0, -1
		n.regrow(n.at, -1)
	case n.best > 0 && (n.solo == 0 || n.best < n.solo) && n.since >= neighbourRecheckEvery:
		n.best, n.lo = 0, -1 // others may take less now: the best again
		n.regrow(n.at, -1)
	case n.since%neighbourForgetEvery == 0:
		n.lo = -1 // a step down may move the aim again
	case n.steady >= n.probeEvery(sig) && n.at > n.lo+1:
		n.change(n.at - 1) // judged by the next sample, as every window is
		n.down = true
	}
}

// probeEvery: others suffering make it try a smaller window sooner.
func (n *Neighbour) probeEvery(sig Signals) int {
	if sig.Suffering {
		return neighbourProbeEvery / 2
	}
	return neighbourProbeEvery
}

// soloRate is the speed alone, or, for a copy that never was (others
// used the disk from its start), the most a window it held sustained
// beside them, as a best (sustain; not only in this episode: a load
// that grew does not lower its floor); 0 until one did.
func (n *Neighbour) soloRate() float64 {
	if n.solo > 0 {
		return n.solo
	}
	return n.bestEver
}

// starved: beside others the copy moves less than the floor of its solo
// speed (and of the cap), where a larger window could help.
func (n *Neighbour) starved(thr float64, sig Signals) bool {
	floor := neighbourFloor * n.soloRate()
	if sig.Cap > 0 {
		floor = min(floor, 0.9*sig.Cap)
	}
	return n.phase != nbAlone && thr < floor && n.at < len(n.levels)-1
}

// Skip forgets what the window moved since it was last judged, and the
// next sample too: the process did not run for a while (stopped by
// SIGSTOP or a shell's ^Z, or starved of the CPU), and what its requests
// took across that time says nothing of the disk or of others. Judged, a
// stop of seconds was a copy others held to nothing: the summary said
// "held back 12.3 s by others' I/O, down to 0%" and the floor doubled
// the window for it. The next sample is the resume's: its requests
// completed during the stop and were reaped after it.
func (n *Neighbour) Skip() {
	n.acc = accum{warm: true}
	n.few = Sample{}
}

// change sets a new window and starts counting the samples at it.
func (n *Neighbour) change(at int) {
	n.at = min(max(at, 0), len(n.levels)-1)
	n.steady, n.short, n.wrong, n.tries = 0, 0, 0, 0
	n.acc = accum{warm: true}
	n.few = Sample{}
}

// accum is what the window now moved since it was last judged.
type accum struct {
	warm   bool // the next sample is the change's: not counted
	bytes  int64
	time   time.Duration
	waited time.Duration // Sample.Paced, summed
	judged time.Duration // the time the last judgement covered
	paced  float64       // seconds of it the copy waited on the cap (at most judged)
}
