package copier

import (
	"fmt"
	"slices"
	"time"
)

// Yield (Options.Yield) gives the disk to other work. A controller beside
// the copy samples, every yieldTick:
//
//   - others: requests per second on the copy's disks that are not the
//     copy's (/sys/block/DISK/stat, less what the copy moved there). Only
//     when others use the disk is there anyone to yield to; alone, the
//     copy runs at full speed. Others count as there for yieldMemory ticks
//     after they were last seen: one that suffers badly completes few
//     requests, and must not look gone for it.
//   - probe: how long a 4 KiB O_DIRECT read of SRC takes now (the upper
//     quartile of a tick's reads, and the median of that over the last
//     yieldRecent ticks, so that one tick's stall elsewhere on the host
//     does not count), the wait a small foreground read sees, against
//     what it took before the copy started (base: the disk as the others
//     had it; lowered should the probe ever fall below it). A foreground
//     that waits more than twice as long as without the copy suffers.
//   - PSI: the share of the tick in which some task stalled on I/O
//     (/proc/pressure/io, from the total counter), against the share the
//     copy causes alone, learnt while nobody else used the disk. PSI
//     counts the copy's own waits too (io_uring waits as iowait, and so
//     do its workers and the pool's threads): ringcp alone showed 65-94%
//     "some" here. Only what exceeds its own share is others stalling.
//
// When others use the disk and suffer (the probe over twice its base, or
// PSI over the copy's own share by yieldPSIExcess), the depth and the rate
// are halved (multiplicative decrease), then left alone for yieldHold
// ticks so the cut shows. A cut that did not help (the probe did not come
// down) is not followed by another: the wait is someone else's doing. Otherwise they grow back by one slot and
// 1/yieldSteps of the copy's own rate per tick (additive increase), until
// the cut is gone. The rate never falls below 1/yieldFloor of the copy's
// own, so that a copy always ends.

const (
	yieldTick   = 250 * time.Millisecond
	yieldProbes = 8  // probe reads per tick; the base takes twice as many
	yieldOthers = 20 // requests per second by others before they count
	// yieldOthersLeast is the fewest requests by others in a tick that
	// count: a tick that came late is followed by a short one, where a
	// stray request was a rate of others.
	yieldOthersLeast = 8
	// yieldOthersStarved is the fewest that count where small reads
	// wait so long that a foreground completes fewer (othersLeast).
	yieldOthersStarved = 2
	yieldMemory        = 8                     // ticks others count as there after they were last seen
	yieldSlack         = 50 * time.Microsecond // added to twice the probe's base: jitter on a fast device
	yieldPSIExcess     = 0.20                  // share of a tick stalled beyond the copy's own
	yieldHold          = 2                     // ticks left alone after a cut
	yieldSteps         = 16                    // ticks from the floor to full rate, in rate steps
	yieldFloor         = 32                    // the rate never goes below 1/yieldFloor of the copy's own
	yieldLearn         = 0.2                   // weight of a new tick in the learnt averages
	yieldRecent        = 3                     // ticks over which the probe is the median
	// yieldBefore is how long the disks are watched before the copy
	// starts, yieldOthersBefore the requests a second by others that
	// count then.
	yieldBefore       = 30 * time.Millisecond
	yieldOthersBefore = 100
)

// yieldSample is what the controller sees in one tick.
type yieldSample struct {
	dt     time.Duration
	moved  int64         // bytes of the range the copy moved (read) in the tick
	probe  time.Duration // upper quartile of the tick's probe read latencies; 0 when there were none
	others float64       // requests per second on the copy's disks that were not the copy's
	some   float64       // share of the tick in which some task stalled on I/O; -1 without PSI
	full   float64       // share in which all non-idle tasks did; -1 without PSI
}

// YieldReport is what the yield controller did during a copy.
type YieldReport struct {
	Cuts, Raises int     // multiplicative cuts, additive steps back
	Futile       int     // ticks others suffered but the last cut had not helped: no cut
	CutSeconds   float64 // time spent with depth or rate cut
	LowestDepth  int     // the least depth it set; the plan's when it never cut
	LowestRate   int64   // the least rate it set, bytes per second; 0 when it never cut
	// ProbeBase and ProbeMax are the probe reads' latency (a tick's upper
	// quartile) before the copy, or on its quietest tick, and on its worst
	// one, in seconds; 0 without probes.
	ProbeBase, ProbeMax float64
	OthersMax           float64 // the most requests per second others made on the copy's disks
	// PSISomeMax and PSIFullMax are the largest shares of a tick in which
	// some, or all non-idle, tasks stalled on I/O; -1 without PSI.
	PSISomeMax, PSIFullMax float64
}

// aimd is the controller's state. step is pure: tests feed it samples.
type aimd struct {
	maxDepth int
	depth    int           // now; maxDepth when not cut
	rate     float64       // the cut's rate in bytes per second; 0 when not cut
	own      float64       // the copy's rate when not cut (learnt)
	base     time.Duration // the probe without the copy
	probe    time.Duration // the probe now: the median of recent
	recent   []time.Duration
	cutProbe time.Duration // the probe when the last cut was made; 0 once others stopped suffering
	others   int           // ticks left that others count as there
	ownSome  float64       // the PSI "some" share the copy causes alone (learnt); -1 until seen
	hold     int
	rep      YieldReport
}

func newAIMD(depth int) *aimd {
	return &aimd{maxDepth: depth, depth: depth, ownSome: -1,
		rep: YieldReport{LowestDepth: depth, PSISomeMax: -1, PSIFullMax: -1}}
}

// step takes one tick's sample and returns the cut: a rate (0 for none)
// and a depth.
func (a *aimd) step(s yieldSample) (float64, int) {
	a.observe(s)
	cut := a.rate > 0 || a.depth < a.maxDepth
	if cut {
		a.rep.CutSeconds += s.dt.Seconds()
	}
	switch {
	case a.hold > 0:
		a.hold--
	case a.others > 0 && a.suffering(s):
		if a.futile() {
			a.rep.Futile++
			break
		}
		a.cut(s)
	case cut:
		a.cutProbe = 0
		a.raise()
	default:
		a.cutProbe = 0
	}
	return a.rate, a.depth
}

// futile: the last cut did not bring the probe down by a fifth. The wait
// is then not the copy's doing (another bulk job, a stall elsewhere on the
// host), and cutting further would only slow the copy: it holds where it
// is until the others stop suffering.
func (a *aimd) futile() bool {
	return a.cutProbe > 0 && a.probe > a.cutProbe*4/5
}

// observe learns the copy's own rate and PSI share while nobody else uses
// the disk and nothing is cut, the probe's base, and the figures for the
// report.
func (a *aimd) observe(s yieldSample) {
	rate := float64(s.moved) / max(s.dt.Seconds(), 1e-3)
	alone := s.othersAlone()
	if alone {
		a.others = max(a.others-1, 0)
	} else {
		a.others = yieldMemory
	}
	if a.rate == 0 && a.depth == a.maxDepth && (alone || rate > a.own) {
		a.own = learn(a.own, rate)
	}
	if alone && s.some >= 0 {
		a.ownSome = learn(a.ownSome, s.some)
	}
	if s.probe > 0 {
		a.recent = append(a.recent, s.probe)
		if len(a.recent) > yieldRecent {
			a.recent = a.recent[1:]
		}
		sorted := slices.Sorted(slices.Values(a.recent))
		a.probe = sorted[len(sorted)/2]
		if a.base == 0 || a.probe < a.base {
			a.base = a.probe
		}
	}
	r := &a.rep
	r.ProbeBase = a.base.Seconds()
	r.ProbeMax = max(r.ProbeMax, s.probe.Seconds())
	r.OthersMax = max(r.OthersMax, s.others)
	r.PSISomeMax, r.PSIFullMax = max(r.PSISomeMax, s.some), max(r.PSIFullMax, s.full)
}

// othersLeast is the fewest requests by others in a tick of dt that
// count when a small read waits probe: yieldOthersLeast, or, where reads
// wait so long that one request in flight completes fewer, that many
// (yieldOthersStarved at least: a stray request is still none). A
// foreground completes a request per wait for each it has in flight:
// fio with 4, queued in a cgroup's throttle behind the copy's 8 MiB,
// waited 290 ms a read like the probe and made 3 or 4 a tick, and was
// never seen while the probe waited a thousand times its base
// (TestYieldBesideReader). The copy's own requests that its counters
// explain late are owed (yieldDisk.others), not counted here.
func othersLeast(dt, probe time.Duration) int64 {
	if probe <= 0 {
		return yieldOthersLeast
	}
	return max(yieldOthersStarved, min(yieldOthersLeast, int64(dt/probe)))
}

// othersAlone: too few requests by others to count, yieldOthers a second
// or, where reads wait long, othersLeast in the tick.
func (s yieldSample) othersAlone() bool {
	least := float64(othersLeast(s.dt, s.probe)) / max(s.dt.Seconds(), 1e-3)
	return s.others < min(yieldOthers, least)
}

// learn moves an average toward v; a first value (avg <= 0) is taken
// as it is.
func learn(avg, v float64) float64 {
	if avg <= 0 {
		return v
	}
	return avg + yieldLearn*(v-avg)
}

// suffering: the probe waits over twice its base, or PSI shows more
// stalls than the copy causes alone.
func (a *aimd) suffering(s yieldSample) bool {
	if s.probe > 0 && a.base > 0 && a.probe > 2*a.base+yieldSlack {
		return true
	}
	return a.ownSome >= 0 && s.some-a.ownSome > yieldPSIExcess
}

// cut halves the depth and the rate.
func (a *aimd) cut(s yieldSample) {
	now := a.rate
	if now == 0 {
		now = float64(s.moved) / max(s.dt.Seconds(), 1e-3)
		if now <= 0 {
			now = a.own
		}
	}
	a.rate = max(now/2, a.floor())
	a.depth = max(1, a.depth/2)
	a.hold = yieldHold
	a.cutProbe = a.probe
	r := &a.rep
	r.Cuts++
	r.LowestDepth = min(r.LowestDepth, a.depth)
	if r.LowestRate == 0 || int64(a.rate) < r.LowestRate {
		r.LowestRate = int64(a.rate)
	}
}

// floor is the least rate a cut leaves: enough that the copy ends.
func (a *aimd) floor() float64 { return max(a.own/yieldFloor, 1<<20) }

// raise gives back a slot and a step of rate; at the copy's own rate and
// full depth the cut is gone.
func (a *aimd) raise() {
	a.rep.Raises++
	a.depth = min(a.maxDepth, a.depth+1)
	if a.rate == 0 {
		return
	}
	a.rate += max(a.own, a.floor()) / yieldSteps
	if a.rate >= a.own && a.depth == a.maxDepth {
		a.rate = 0
	}
}

// String says what the controller did, for -v.
func (r *YieldReport) String() string {
	s := fmt.Sprintf("yield: cut %d times, raised %d times", r.Cuts, r.Raises)
	if r.Futile > 0 {
		s += fmt.Sprintf(", held %d times where cutting did not help", r.Futile)
	}
	if r.Cuts > 0 {
		s += fmt.Sprintf(" (depth down to %d, rate down to %s, %.1f s cut)", r.LowestDepth, rateString(r.LowestRate), r.CutSeconds)
	}
	if r.ProbeBase > 0 {
		s += fmt.Sprintf("; probe reads %.2f ms at best, %.2f ms at worst", r.ProbeBase*1e3, r.ProbeMax*1e3)
	}
	s += fmt.Sprintf("; others made up to %.0f requests/s", r.OthersMax)
	if r.PSISomeMax >= 0 {
		s += fmt.Sprintf("; I/O pressure up to %.0f%% some, %.0f%% full", 100*r.PSISomeMax, 100*r.PSIFullMax)
	}
	return s
}
