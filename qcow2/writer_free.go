package qcow2

import "sort"

// A checkpointing Writer (WriterOptions.Checkpoints) frees host clusters
// as it goes: each checkpoint's metadata once the next one is live, and
// on Resume what the checkpoint it resumes from no longer needs. Freed
// clusters are punched (they read as zeros, as a new cluster at the
// frontier does) and handed out again to data, first fit; the metadata
// of a checkpoint always goes at the frontier, so that the file's end
// lies past every cluster its tables name.

// freeRun is a run of free host clusters [off, end).
type freeRun struct{ off, end int64 }

// allocCluster hands out one host cluster for data: the first free one,
// else at the frontier; w.mu is held.
func (w *Writer) allocCluster() int64 {
	host, _ := w.allocRun(1)
	return host
}

// allocRun hands out up to n consecutive host clusters for data: the
// first free run, whole or its first n clusters, else n at the frontier;
// got says how many. Freed runs are mostly a checkpoint's few clusters,
// shorter than a span of data: taken in pieces, they are used, and the
// file does not grow by a copy of the tables at each checkpoint. w.mu is
// held.
func (w *Writer) allocRun(n int64) (host, got int64) {
	if len(w.free) == 0 {
		return w.allocClusters(n), n
	}
	r := &w.free[0]
	host, got = r.off, min(n, (r.end-r.off)/w.cs)
	r.off += got * w.cs
	if r.off == r.end {
		w.free = w.free[1:]
	}
	return host, got
}

// release punches host clusters nothing on disk names any more and
// makes them free; those it cannot punch stay unused. w.mu is not held.
func (w *Writer) release(runs []freeRun) {
	var punched []freeRun
	for _, r := range runs {
		if r.end > r.off && punch(w.t, r.off, r.end-r.off) {
			punched = append(punched, r)
		}
	}
	if len(punched) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.free = mergeRuns(append(w.free, punched...))
}

// mergeRuns sorts runs and joins those that touch.
func mergeRuns(runs []freeRun) []freeRun {
	sort.Slice(runs, func(i, j int) bool { return runs[i].off < runs[j].off })
	out := runs[:0]
	for _, r := range runs {
		if n := len(out); n > 0 && out[n-1].end >= r.off {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}
