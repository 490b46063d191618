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
