package copier

import "time"

// A copy stopped for a while (SIGSTOP, a shell's ^Z, a debugger; or a
// process starved of the CPU as long) moves nothing while its clock runs
// on. The good neighbour and --yield judge what the copy moved over
// time: a sample that spans a stop of seconds is a copy moving next to
// nothing beside others, so the summary said "held back 12.3 s by others'
// I/O, down to 0% of its speed alone (its floor of 50% kept it moving
// 12.3 s)" of a copy stopped 12 s beside a busy disk, the floor doubled
// the window, and --yield cut the rate to its floor (1 MiB/s) and counted
// the stop as time yielded, so that a 256 MiB copy stopped 12 s took 34 s
// where it took 10 unstopped. A heartbeat beside the watcher tells such
// time: nothing else runs in it, so it is late only when the process did
// not run. What was measured across it is not judged.

const (
	// pauseBeat is how often the heartbeat beats.
	pauseBeat = 100 * time.Millisecond
	// pauseLate: a beat this much later than the last says the process
	// did not run in between. Far over a Go scheduler's or a busy
	// machine's delay, under the stops that misled the controllers.
	pauseLate = 500 * time.Millisecond
)

// beatStart says a heartbeat beats for g from now.
func (g *governor) beatStart(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.beats++
	g.beatAt = now
}

// beat records a heartbeat at now, and the pause before it when it came
// late.
func (g *governor) beat(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.beatAt) > pauseBeat+pauseLate {
		g.pausedTo = now
	}
	g.beatAt = now
}

// beatEnd says a heartbeat stopped.
func (g *governor) beatEnd() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.beats--
}

// pausedSince says whether the process did not run for a while between
// since and now: a pause the heartbeat saw ended after since, or the
// heartbeat is late now (the thread asking ran first after a stop).
// Called with mu held.
func (g *governor) pausedSince(since, now time.Time) bool {
	return g.pausedTo.After(since) || g.beats > 0 && now.Sub(g.beatAt) > pauseBeat+pauseLate
}

// paused is pausedSince with mu taken.
func (g *governor) paused(since, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pausedSince(since, now)
}
