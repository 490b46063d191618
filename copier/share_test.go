package copier

import (
	"strings"
	"testing"
)

// TestFitSizes: a cap shrinks the block to 1/40 s of it and keeps the
// buffers (the governor decides how many are out, from the latency); a
// cgroup limit shrinks the block to an eighth of a second of it and keeps
// a second in flight; sizes the caller gave are kept, with a note.
func TestFitSizes(t *testing.T) {
	const M = 1 << 20
	cases := []struct {
		name             string
		bs, qd           int
		givenBS, givenQD bool
		fit              shareFit
		unit             int64
		wantBS, wantQD   int
		note             string
	}{
		{name: "no limit", bs: 8 * M, qd: 8, fit: shareFit{}, unit: 4096, wantBS: 8 * M, wantQD: 8},
		{name: "fast cap", bs: 8 * M, qd: 8, fit: shareFit{cap: 1 << 30}, unit: 4096, wantBS: 8 * M, wantQD: 8, note: "in flight under the cap: as many of the 8 blocks as the latency"},
		{name: "10 MiB/s", bs: 8 * M, qd: 8, fit: shareFit{cap: 10 * M}, unit: 4096, wantBS: 256 << 10, wantQD: 8, note: "two blocks are 50 ms of the 10.0 MiB/s cap"},
		{name: "1 MiB/s", bs: 8 * M, qd: 8, fit: shareFit{cap: M}, unit: 4096, wantBS: 24 << 10, wantQD: 8},
		{name: "tiny cap", bs: 8 * M, qd: 8, fit: shareFit{cap: 1000}, unit: 4096, wantBS: 4096, wantQD: 8, note: "in flight under the cap"},
		{name: "unit not a power of two", bs: 12 * M, qd: 8, fit: shareFit{cap: 10 * M}, unit: 3 << 12, wantBS: 21 * 3 << 12, wantQD: 8},
		{name: "cgroup", bs: 8 * M, qd: 8, fit: shareFit{limit: 100 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 8 * M, wantQD: 8},
		{name: "cgroup 32 MiB/s", bs: 8 * M, qd: 8, fit: shareFit{limit: 32 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 4 * M, wantQD: 8, note: "1/8 of 32.0 MiB/s (cgroup)"},
		{name: "cgroup slow", bs: 8 * M, qd: 8, fit: shareFit{limit: 4 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 512 << 10, wantQD: 8},
		{name: "cgroup very slow", bs: 8 * M, qd: 8, fit: shareFit{limit: M, limitWhy: "cgroup"}, unit: 4096, wantBS: 128 << 10, wantQD: 8},
		{name: "cgroup and cap", bs: 8 * M, qd: 8, fit: shareFit{cap: 40 * M, limit: 100 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: M, wantQD: 8},
		{name: "cgroup under the cap", bs: 8 * M, qd: 8, fit: shareFit{cap: 400 * M, limit: 24 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: 3 * M, wantQD: 8},
		{name: "iops", bs: 8 * M, qd: 32, fit: shareFit{iops: 10}, unit: 4096, wantBS: 8 * M, wantQD: 10, note: "10 requests"},
		{name: "yield", bs: 8 * M, qd: 8, fit: shareFit{yield: true}, unit: 4096, wantBS: M, wantQD: 8, note: "yield"},
		{name: "given block", bs: 8 * M, qd: 8, givenBS: true, fit: shareFit{cap: M}, unit: 4096, wantBS: 8 * M, wantQD: 8, note: "(given) is over"},
		{name: "given depth", bs: 8 * M, qd: 16, givenQD: true, fit: shareFit{limit: 32 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: 4 * M, wantQD: 16, note: "(given) keeps more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Plan{BlockSize: c.bs, QueueDepth: c.qd}
			if c.givenBS {
				p.opts.BlockSize = c.bs
			}
			if c.givenQD {
				p.opts.QueueDepth = c.qd
			}
			p.fitSizes(c.fit, c.unit)
			if p.BlockSize != c.wantBS || p.QueueDepth != c.wantQD {
				t.Errorf("block %d, depth %d; want %d, %d (notes %q)", p.BlockSize, p.QueueDepth, c.wantBS, c.wantQD, p.Notes)
			}
			if int64(p.BlockSize)%c.unit != 0 {
				t.Errorf("block %d is not a multiple of %d", p.BlockSize, c.unit)
			}
			inFlight := int64(p.QueueDepth * p.BlockSize)
			if c.fit.cap > 0 && !c.givenBS && int64(p.BlockSize) > max(c.unit, c.fit.cap/40) {
				t.Errorf("block %d: over 1/40 s of the %d/s cap", p.BlockSize, c.fit.cap)
			}
			if c.fit.limit > 0 && !c.givenBS && !c.givenQD && p.QueueDepth > 1 && inFlight > c.fit.limit {
				t.Errorf("%d x %d in flight: over a second of the %d/s limit", p.QueueDepth, p.BlockSize, c.fit.limit)
			}
			if c.note != "" && !strings.Contains(strings.Join(p.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", p.Notes, c.note)
			}
		})
	}
}

// TestFitReads: a read pass under a cgroup read limit reads in requests of
// an eighth of a second of it (a cell is cut, never below the alignment)
// and keeps a second of it in flight; an IOPS limit bounds the depth; no
// limit leaves a pass as it was.
func TestFitReads(t *testing.T) {
	const M = 1 << 20
	for _, c := range []struct {
		name            string
		fit             shareFit
		wantReq, wantQD int
		wantLimited     bool
	}{
		{name: "none", fit: shareFit{}, wantReq: 0, wantQD: 0},
		{name: "2 MiB/s", fit: shareFit{limit: 2 * M, limitWhy: "cgroup"}, wantReq: 256 << 10, wantQD: 8, wantLimited: true},
		{name: "fast", fit: shareFit{limit: 1 << 30, limitWhy: "cgroup"}, wantReq: 128 * M, wantQD: 8, wantLimited: true},
		{name: "tiny", fit: shareFit{limit: 1000, limitWhy: "cgroup"}, wantReq: 4096, wantQD: 1, wantLimited: true},
		{name: "iops", fit: shareFit{iops: 3}, wantReq: 0, wantQD: 3, wantLimited: true},
		{name: "both", fit: shareFit{limit: 8 * M, iops: 4, limitWhy: "cgroup"}, wantReq: M, wantQD: 4, wantLimited: true},
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
