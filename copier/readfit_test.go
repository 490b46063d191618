package copier

import "testing"

// TestFitReads: a read pass under a cgroup read limit reads in requests of
// an eighth of a second of it (a cell is cut, never below the alignment)
// and keeps a second of it in flight; an IOPS limit bounds the depth; no
// limit leaves a pass as it was.
func TestFitReads(t *testing.T) {
	const M = 1 << 20
	for _, c := range []struct {
		name            string
		fit             ioLimits
		wantReq, wantQD int
		wantLimited     bool
	}{
		{name: "none", fit: ioLimits{}, wantReq: 0, wantQD: 0},
		{name: "2 MiB/s", fit: ioLimits{limit: 2 * M, limitWhy: "cgroup"}, wantReq: 256 << 10, wantQD: 8, wantLimited: true},
		{name: "fast", fit: ioLimits{limit: 1 << 30, limitWhy: "cgroup"}, wantReq: 128 * M, wantQD: 8, wantLimited: true},
		{name: "tiny", fit: ioLimits{limit: 1000, limitWhy: "cgroup"}, wantReq: 4096, wantQD: 1, wantLimited: true},
		{name: "iops", fit: ioLimits{iops: 3}, wantReq: 0, wantQD: 3, wantLimited: true},
		{name: "both", fit: ioLimits{limit: 8 * M, iops: 4, limitWhy: "cgroup"}, wantReq: M, wantQD: 4, wantLimited: true},
	} {
		rf := fitReads(c.fit, 4096, 8)
		if rf.request != c.wantReq || rf.depth != c.wantQD || rf.limited != c.wantLimited {
			t.Errorf("%s: %+v, want request %d, depth %d, limited %v", c.name, rf, c.wantReq, c.wantQD, c.wantLimited)
		}
		if c.fit.limit > 0 && int64(rf.request*rf.depth) > max(c.fit.limit, 4096) {
			t.Errorf("%s: %d x %d in flight: over a second of %d/s", c.name, rf.depth, rf.request, c.fit.limit)
		}
	}
}
