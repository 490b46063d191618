package copier

import (
	"strings"
	"testing"

	"github.com/ringcp/ringcp/align"
)

// TestFitSizes: a cap keeps blocks of a MiB at least (1/40 s of it when
// more; share.go's rule of the capped buffers), and its requests are cut
// to 1/40 s of it (the governor, which also decides how many are out,
// from the latency), so that a cap raised or lifted later moves blocks
// of a MiB (how many buffers: TestDecideSizes); a
// cgroup limit shrinks the block to an eighth of a second of it and keeps
// a second in flight; sizes the caller gave are kept, with a note.
func TestFitSizes(t *testing.T) {
	const M = 1 << 20
	cases := []struct {
		name             string
		bs, qd           int
		givenBS, givenQD bool
		fit              sizing
		unit             int64
		wantBS, wantQD   int
		note             string
	}{
		{name: "no limit", bs: 8 * M, qd: 8, fit: sizing{}, unit: 4096, wantBS: 8 * M, wantQD: 8},
		{name: "fast cap", bs: 8 * M, qd: 8, fit: sizing{cap: 1 << 30}, unit: 4096, wantBS: 8 * M, wantQD: 8},
		{name: "10 MiB/s", bs: 8 * M, qd: 8, fit: sizing{cap: 10 * M}, unit: 4096, wantBS: M, wantQD: 8, note: "requests of at most 256 KiB while the cap holds: two are 50 ms of the 10.0 MiB/s cap, so the copy moves in small steps and never runs ahead of the cap; blocks of 1.00 MiB"},
		{name: "1 MiB/s", bs: 8 * M, qd: 8, fit: sizing{cap: M}, unit: 4096, wantBS: M, wantQD: 8, note: "requests of at most 24.0 KiB"},
		{name: "tiny cap", bs: 8 * M, qd: 8, fit: sizing{cap: 1000}, unit: 4096, wantBS: M, wantQD: 8, note: "requests of at most 4.00 KiB"},
		{name: "unit not a power of two", bs: 12 * M, qd: 8, fit: sizing{cap: 10 * M}, unit: 3 << 12, wantBS: 85 * 3 << 12, wantQD: 8, note: "requests of at most 252 KiB"},
		{name: "cgroup", bs: 8 * M, qd: 8, fit: sizing{limit: 100 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 8 * M, wantQD: 8},
		{name: "cgroup 32 MiB/s", bs: 8 * M, qd: 8, fit: sizing{limit: 32 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 4 * M, wantQD: 8, note: "1/8 of 32.0 MiB/s (cgroup)"},
		{name: "cgroup slow", bs: 8 * M, qd: 8, fit: sizing{limit: 4 * M, limitWhy: "cgroup"}, unit: 512, wantBS: 512 << 10, wantQD: 8},
		{name: "cgroup very slow", bs: 8 * M, qd: 8, fit: sizing{limit: M, limitWhy: "cgroup"}, unit: 4096, wantBS: 128 << 10, wantQD: 8},
		{name: "cgroup and cap", bs: 8 * M, qd: 8, fit: sizing{cap: 40 * M, limit: 100 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: M, wantQD: 8, note: "block size 1.00 MiB: two are 50 ms of the 40.0 MiB/s cap"},
		{name: "cgroup under the cap", bs: 8 * M, qd: 8, fit: sizing{cap: 400 * M, limit: 24 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: 3 * M, wantQD: 8},
		{name: "iops", bs: 8 * M, qd: 32, fit: sizing{iops: 10}, unit: 4096, wantBS: 8 * M, wantQD: 10, note: "10 requests"},
		{name: "yield", bs: 8 * M, qd: 8, fit: sizing{yield: true}, unit: 4096, wantBS: M, wantQD: 8, note: "yield"},
		{name: "given block", bs: 8 * M, qd: 8, givenBS: true, fit: sizing{cap: M}, unit: 4096, wantBS: 8 * M, wantQD: 8, note: "(given) is over"},
		{name: "given depth", bs: 8 * M, qd: 16, givenQD: true, fit: sizing{limit: 32 * M, limitWhy: "cgroup"}, unit: 4096, wantBS: 4 * M, wantQD: 16, note: "(given) keeps more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.fit
			in.src, in.dst = align.Geometry{OffsetAlign: int(c.unit)}, align.Geometry{OffsetAlign: int(c.unit)}
			p := sizes{block: c.bs, depth: c.qd}
			p.fit(in, c.givenBS, c.givenQD)
			if p.block != c.wantBS || p.depth != c.wantQD {
				t.Errorf("block %d, depth %d; want %d, %d (notes %q)", p.block, p.depth, c.wantBS, c.wantQD, p.why)
			}
			if int64(p.block)%c.unit != 0 {
				t.Errorf("block %d is not a multiple of %d", p.block, c.unit)
			}
			inFlight := int64(p.depth * p.block)
			if c.fit.limit > 0 && !c.givenBS && !c.givenQD && p.depth > 1 && inFlight > c.fit.limit {
				t.Errorf("%d x %d in flight: over a second of the %d/s limit", p.depth, p.block, c.fit.limit)
			}
			if c.note != "" && !strings.Contains(strings.Join(p.why, "\n"), c.note) {
				t.Errorf("notes %q lack %q", p.why, c.note)
			}
		})
	}
}

// TestDecideSizes: the block size and depth from every input at once: the
// ends' geometry, what was asked (rounded to O_DIRECT's alignment with
// Direct auto), the rate cap, cgroup limits, yield, and whole cells for
// verification and checksums, in that order.
func TestDecideSizes(t *testing.T) {
	const K, M = 1 << 10, 1 << 20
	file := align.Geometry{Size: 1 << 30, MemAlign: 4096, OffsetAlign: 4096, DirectSupported: true}
	small := file
	small.Size = 100_000
	raid := align.Geometry{Size: 1 << 40, MemAlign: 512, OffsetAlign: 4096, DirectSupported: true, OptimalIO: 196608}
	export := align.Geometry{Size: 1 << 30, MemAlign: 1, OffsetAlign: 512, OptimalIO: 64 * K}
	noDirect := file
	noDirect.DirectSupported = false
	cases := []struct {
		name           string
		in             sizing
		wantBS, wantQD int
		note           string
	}{
		{"defaults", sizing{src: file, dst: file}, 8 * M, 8, "block size 8 MiB: default"},
		{"small source", sizing{src: small, dst: file}, 102400, 1, "the source has only 1 block"},
		{"optimal I/O", sizing{src: file, dst: raid}, 8256 * K, 8, "optimal I/O 196608"},
		{"export", sizing{src: export, dst: file}, 8 * M, 8, "alignment 4096"},
		{"asked, rounded", sizing{src: file, dst: file, askBlock: 4_000_000, roundAsked: true}, 3997696, 8, "rounded to 3997696"},
		{"asked, one unit", sizing{src: file, dst: file, askBlock: 1000, roundAsked: true}, 4096, 8, "rounded to 4096"},
		{"asked, side without O_DIRECT", sizing{src: noDirect, dst: export, askBlock: 1000, roundAsked: true}, 1000, 8, "block size 1000 bytes: given"},
		{"asked, not rounded", sizing{src: file, dst: file, askBlock: 4_000_000}, 4_000_000, 8, "not a multiple of alignment 4096"},
		{"asked depth", sizing{src: file, dst: file, askDepth: 3}, 8 * M, 3, "queue depth 3: given"},
		{"cap", sizing{src: file, dst: file, cap: 10 * M}, M, 8, "requests of at most 256 KiB while the cap holds: two are 50 ms of the 10.0 MiB/s cap"},
		{"cap, block asked", sizing{src: file, dst: file, cap: M, askBlock: 8 * M}, 8 * M, 2, "(given) is over"},
		{"fast cap", sizing{src: file, dst: file, cap: 1 << 30}, 8 * M, 8, "in flight under the cap: as many of the 8 blocks as the latency"},
		{"--max-rate 4M", sizing{src: file, dst: file, cap: 4 * M}, M, 4, "queue depth 4: the buffers hold a second of the 4.00 MiB/s cap (2 at least)"},
		{"tiny cap", sizing{src: file, dst: file, cap: 1000}, M, 2, "in flight under the cap: as many of the 2 blocks"},
		{"cap, depth asked over a second", sizing{src: file, dst: file, cap: 4 * M, askDepth: 16}, M, 16, "queue depth 16 (given) keeps more than a second of the 4.00 MiB/s cap"},
		{"cap, depth asked", sizing{src: file, dst: file, cap: 8 * M, askDepth: 16}, M, 16, "in flight under the cap: as many of the 16 blocks"},
		{"cgroup", sizing{src: file, dst: file, limit: 32 * M, limitWhy: "cgroup"}, 4 * M, 8, "1/8 of 32.0 MiB/s (cgroup)"},
		{"cgroup iops", sizing{src: file, dst: file, iops: 4}, 8 * M, 4, "4 requests"},
		{"yield", sizing{src: file, dst: file, yield: true}, M, 8, "yield"},
		{"an end's most", sizing{src: file, dst: file, maxRequest: 1 << 20}, M, 8, "the most an end takes in one request is 1.00 MiB"},
		{"an end's most, asked over it", sizing{src: file, dst: file, maxRequest: 3 << 20, askBlock: 16 * M}, 3 * M, 8, "the most an end takes"},
		{"cells", sizing{src: small, dst: file, cells: true}, CellSize, 1, "rounded up to 4194304"},
		{"cells after a cap", sizing{src: file, dst: file, cap: 10 * M, cells: true}, CellSize, 2, "rounded up to 4194304"},
		{"read passes under a cap", sizing{src: file, dst: file, cap: 16 * M, cells: true, reads: ioLimits{limit: 64 * M, limitWhy: "cgroup"}}, CellSize, 4, "read passes (read-back, checksum of a resumed part): reads of at most 8.00 MiB, 4 in flight"},
		{"read passes", sizing{src: file, dst: file, cells: true, reads: ioLimits{limit: 2 * M, limitWhy: "cgroup"}}, 8 * M, 8, "read passes (read-back, checksum of a resumed part): reads of at most 256 KiB, 8 in flight"},
		{"a checksum", sizing{src: file, dst: file, cells: true, passOnly: true, reads: ioLimits{limit: 1 << 20, limitWhy: "cgroup"}}, 8 * M, 8, "reads of at most 128 KiB, 8 in flight"},
		{"a checksum, iops", sizing{src: file, dst: file, cells: true, passOnly: true, reads: ioLimits{iops: 3}}, 8 * M, 3, "3 reads in flight"},
		{"read limits, no pass", sizing{src: file, dst: file, reads: ioLimits{limit: 2 * M, limitWhy: "cgroup"}}, 8 * M, 8, "block size 8 MiB: default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := decideSizes(c.in)
			if s.block != c.wantBS || s.depth != c.wantQD {
				t.Errorf("block %d, depth %d; want %d, %d (notes %q)", s.block, s.depth, c.wantBS, c.wantQD, s.why)
			}
			if !strings.Contains(strings.Join(s.why, "\n"), c.note) {
				t.Errorf("notes %q lack %q", s.why, c.note)
			}
			if again := decideSizes(c.in); again.block != s.block || again.depth != s.depth || len(again.why) != len(s.why) {
				t.Errorf("a second call decided %d x %d, the first %d x %d", again.block, again.depth, s.block, s.depth)
			}
		})
	}
}

// TestBatchSizes: a batch's shared buffers are those of one copy: the
// largest job's block, the deepest asked depth or the default (under a
// cap, a second of it, two at least: share.go, and one for each job that
// runs at once), no more than the jobs have blocks, within the bytes one
// copy keeps in flight.
func TestBatchSizes(t *testing.T) {
	const M = 1 << 20
	cases := []struct {
		name        string
		jobs        []batchJob
		cap         int64
		together    int
		block, slot int
	}{
		{"largest block", []batchJob{{block: M, length: 1 << 30}, {block: 8 * M, length: 1 << 30}}, 0, 1, 8 * M, align.DefaultQueueDepth},
		{"asked depth", []batchJob{{block: M, length: 1 << 30, askDepth: 3}, {block: M, length: 1 << 30}}, 0, 1, M, 3},
		{"--max-rate 4M", []batchJob{{block: M, length: 1 << 30}, {block: M, length: 1 << 30}}, 4 * M, 1, M, 4},
		{"tiny cap", []batchJob{{block: M, length: 1 << 30}}, 1, 1, M, 2},
		{"fast cap", []batchJob{{block: 8 * M, length: 1 << 30}}, 1 << 30, 1, 8 * M, align.DefaultQueueDepth},
		{"cap, asked depth", []batchJob{{block: M, length: 1 << 30, askDepth: 8}}, 4 * M, 1, M, 8},
		{"few blocks", []batchJob{{block: M, length: M + 1}, {block: 64 << 10, length: 5}}, 0, 1, M, 3},
		{"in flight", []batchJob{{block: 64 * M, length: 1 << 40, askDepth: 100}}, 0, 1, 64 * M, int(align.MaxInFlightBytes / (64 * M))},
		{"empty", []batchJob{{block: M}}, 0, 1, M, 1},
		{"tiny cap, three at once", []batchJob{{block: M, length: 1 << 30}, {block: M, length: 1 << 30}, {block: M, length: 1 << 30}}, 1, 3, M, 3},
		{"tiny cap, ten at once", []batchJob{{block: M, length: 1 << 30}}, 1, 10, M, align.DefaultQueueDepth},
	}
	for _, c := range cases {
		if block, slots := batchSizes(c.jobs, c.cap, c.together); block != c.block || slots != c.slot {
			t.Errorf("%s: %d x %d; want %d x %d", c.name, block, slots, c.block, c.slot)
		}
	}
}
