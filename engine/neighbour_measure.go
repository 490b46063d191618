package engine

// What the good neighbour (neighbour.go) makes of its samples: what a
// window moved, the best beside others, the speed alone, its aim and
// its floor.

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
