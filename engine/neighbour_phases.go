package engine

// How the good neighbour (neighbour.go) moves its window in each phase:
// growing, settling on the least window that moves its aim, searching
// between two, and holding.

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
