package copier

import "sync"

// The jobs of a batch run on one budget, and each has a watcher
// (yield_linux.go) of its own disks. A job's requests are others' to the
// other jobs' watchers unless counted as the copy's own: three jobs on
// one disk, alone there, took one another for others, and the batch's
// good neighbour grew from 128 KiB and never kept every slot. So each
// watcher counts the requests of every job of its batch on its disks
// (and their probe reads) as the copy's.

// batchWatchers are the watchers of a batch's jobs, on the batch's
// governor. A job that ended stays: its last requests are counted by
// the others' next tick, and it moves nothing after.
type batchWatchers struct {
	mu   sync.Mutex
	list []*yielder
}

// watch adds a job's watcher to the batch's.
func (g *governor) watch(y *yielder) {
	g.watchers.mu.Lock()
	defer g.watchers.mu.Unlock()
	g.watchers.list = append(g.watchers.list, y)
}

// siblingCounts is what a job moved and probed so far: Progress.Read,
// Done and Writes, and its probe reads.
type siblingCounts struct{ read, done, writes, probes int64 }

// siblingsNow is what the other jobs' watchers of y's batch moved and
// probed so far; nil for a copy alone.
func (y *yielder) siblingsNow() map[*yielder]siblingCounts {
	batch := y.gov.batch()
	if batch == nil {
		return nil
	}
	batch.watchers.mu.Lock()
	defer batch.watchers.mu.Unlock()
	out := make(map[*yielder]siblingCounts, len(batch.watchers.list))
	for _, s := range batch.watchers.list {
		if s != y {
			out[s] = siblingCounts{s.prog.Read.Load(), s.prog.Done.Load(), s.prog.Writes.Load(), s.probes.Load()}
		}
	}
	return out
}

// siblingReqs counts the requests the other jobs sent to disk d between
// from and to (siblingsNow), in requests of req bytes; a job not in from
// started after it, and counts from its start.
func (y *yielder) siblingReqs(d *yieldDisk, req int64, from, to map[*yielder]siblingCounts) int64 {
	var n int64
	for s, now := range to {
		was, ok := from[s]
		if !ok {
			was = siblingCounts{s.read0, s.done0, s.writes0, 0}
		}
		for _, sd := range s.disks {
			if sd.stat != d.stat {
				continue
			}
			if sd.src {
				n += ceilDiv(now.read-was.read, req) + max(now.probes-was.probes, 0)
			}
			if sd.dst {
				n += ownWrites(now.done-was.done, now.writes-was.writes, req)
			}
		}
	}
	return n
}

// siblingWatches: another job of the batch (in sibs, siblingsNow)
// watches disk d.
func (y *yielder) siblingWatches(d *yieldDisk, sibs map[*yielder]siblingCounts) bool {
	for s := range sibs {
		for _, sd := range s.disks {
			if sd.stat == d.stat {
				return true
			}
		}
	}
	return false
}
