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

// siblingsNow is what the other jobs' watchers of y's batch moved so far
// (Progress.Read and Done) and probed; nil for a copy alone.
func (y *yielder) siblingsNow() map[*yielder][3]int64 {
	batch := y.gov.batch()
	if batch == nil {
		return nil
	}
	batch.watchers.mu.Lock()
	defer batch.watchers.mu.Unlock()
	out := make(map[*yielder][3]int64, len(batch.watchers.list))
	for _, s := range batch.watchers.list {
		if s != y {
			out[s] = [3]int64{s.prog.Read.Load(), s.prog.Done.Load(), s.probes.Load()}
		}
	}
	return out
}

// siblingReqs counts the requests the other jobs sent to disk d between
// from and to (siblingsNow), in requests of req bytes; a job not in from
// started after it, and counts from its start.
func (y *yielder) siblingReqs(d *yieldDisk, req int64, from, to map[*yielder][3]int64) int64 {
	var n int64
	for s, now := range to {
		was, ok := from[s]
		if !ok {
			was = [3]int64{s.read0, s.done0, 0}
		}
		for _, sd := range s.disks {
			if sd.stat != d.stat {
				continue
			}
			if sd.src {
				n += ceilDiv(now[0]-was[0], req) + max(now[2]-was[2], 0)
			}
			if sd.dst {
				n += ceilDiv(now[1]-was[1], req)
			}
		}
	}
	return n
}

// siblingWatches: another job of the batch (in sibs, siblingsNow)
// watches disk d.
func (y *yielder) siblingWatches(d *yieldDisk, sibs map[*yielder][3]int64) bool {
	for s := range sibs {
		for _, sd := range s.disks {
			if sd.stat == d.stat {
				return true
			}
		}
	}
	return false
}
