package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ringcp/ringcp/internal/units"
)

// The ceiling is what the device can do for a copy: fio reads SRC and
// writes DST at the same time, io_uring and O_DIRECT, and the copy cannot
// end before the slower of the two streams. It is measured at the best of a
// small grid of block sizes and depths, chosen once per workload by a
// calibration pass, then run in every round like any other tool.

// fioShape is one point of the grid.
type fioShape struct {
	BS    int64 `json:"bs"`
	Depth int   `json:"depth"`
}

// fioResult is what one ceiling run measured: the shape it ran at and the
// rate of each stream.
type fioResult struct {
	Shape     fioShape `json:"shape"`
	ReadMBps  float64  `json:"read_mbps"`
	WriteMBps float64  `json:"write_mbps"`
}

func (s fioShape) String() string { return fmt.Sprintf("bs=%s iodepth=%d", sizeLabel(s.BS), s.Depth) }

// fioGrid spans the seeds' block sizes (1 MiB; 32 MiB was the LVM extent)
// and shallow to deep queues; 12 points, run twice, keep calibration near a
// minute.
// On the test VM the deep, large corner wins (16-32 MiB x 32: writes near
// 1.1 GB/s where 1 MiB x 2 gets 0.8), so the grid reaches the sweep's top.
var fioGrid = func() []fioShape {
	var g []fioShape
	for _, bs := range []int64{1 << 20, 4 << 20, 16 << 20, 32 << 20} {
		for _, d := range []int{2, 8, 32} {
			g = append(g, fioShape{bs, d})
		}
	}
	return g
}()

// calibrationSize caps the bytes each grid point moves.
const calibrationSize = 1 << 30

func fioPlan(j Job) Plan {
	s := j.Fio
	if s.BS == 0 {
		s = fioShape{4 << 20, 8}
	}
	size := max(j.Size/s.BS*s.BS, s.BS)
	return Plan{{{"fio", "--output-format=json", "--ioengine=io_uring", "--direct=1",
		"--bs=" + strconv.FormatInt(s.BS, 10), "--iodepth=" + strconv.Itoa(s.Depth),
		"--size=" + strconv.FormatInt(size, 10),
		// A copy writes a new file: no preallocation, as for the other tools.
		"--fallocate=none",
		"--name=read", "--rw=read", "--filename=" + j.Src,
		"--name=write", "--rw=write", "--filename=" + j.Dst}}}
}

type fioOutput struct {
	Jobs []struct {
		Name    string `json:"jobname"`
		Runtime int64  `json:"job_runtime"` // ms
		Read    struct {
			IOBytes int64 `json:"io_bytes"`
		} `json:"read"`
		Write struct {
			IOBytes int64 `json:"io_bytes"`
		} `json:"write"`
	} `json:"jobs"`
}

// parseFio turns fio's report into a copy time for r.Size bytes: each
// stream's rate scaled to Size, and the slower stream decides. The process
// wall time (fio's setup included) is replaced by it.
func parseFio(out [][]byte, r *Run) error {
	b := out[0]
	if i := bytes.IndexByte(b, '{'); i >= 0 {
		b = b[i:]
	}
	if r.Fio == nil {
		r.Fio = &fioResult{}
	}
	var fo fioOutput
	if err := json.Unmarshal(b, &fo); err != nil {
		return fmt.Errorf("fio JSON: %w", err)
	}
	var slowest time.Duration
	for _, jb := range fo.Jobs {
		n := jb.Read.IOBytes + jb.Write.IOBytes
		if n == 0 || jb.Runtime == 0 {
			return fmt.Errorf("fio job %s moved nothing", jb.Name)
		}
		t := time.Duration(float64(jb.Runtime) * float64(time.Millisecond) * float64(r.Size) / float64(n))
		rate := units.MBps(n, float64(jb.Runtime)/1e3)
		switch jb.Name {
		case "read":
			r.Fio.ReadMBps = rate
		case "write":
			r.Fio.WriteMBps = rate
		}
		slowest = max(slowest, t)
	}
	if len(fo.Jobs) != 2 {
		return fmt.Errorf("fio reported %d jobs, want 2", len(fo.Jobs))
	}
	r.Wall = slowest
	return nil
}

// calibrationPasses is how often each grid point runs. Noise on a shared
// VM only ever slows a run down, so a point's best pass is its estimate;
// the second pass goes in reverse order so that a burst of load elsewhere
// does not sink the same points twice.
const calibrationPasses = 2

// calibrate runs fio at every grid point on a slice of the workload and
// returns the fastest shape.
func calibrate(ctx context.Context, b *bench, w *Workload, p *Pair) (fioShape, error) {
	t, _ := toolByName("fio-ceiling")
	cp := *p
	cp.Size = min(p.Size, calibrationSize)
	bestOf := map[fioShape]time.Duration{}
	for pass := range calibrationPasses {
		grid := fioGrid
		if pass%2 == 1 {
			grid = slices.Clone(grid)
			slices.Reverse(grid)
		}
		for _, s := range grid {
			r := b.runOne(ctx, w, t, Job{Pair: &cp, Fio: s}, 0, 0)
			if ctx.Err() != nil {
				return fioShape{}, ctx.Err()
			}
			if r.Err != nil {
				b.env.logf("  calibration %s: %v", s, r.Err)
				continue
			}
			b.env.logf("  calibration %s: %.0f MB/s", s, mbps(cp.Size, r.Wall))
			if old, ok := bestOf[s]; !ok || r.Wall < old {
				bestOf[s] = r.Wall
			}
		}
	}
	var best fioShape
	for _, s := range fioGrid { // grid order: ties go to the smaller shape
		if d, ok := bestOf[s]; ok && (best.BS == 0 || d < bestOf[best]) {
			best = s
		}
	}
	if best.BS == 0 {
		return best, fmt.Errorf("no fio grid point ran")
	}
	return best, nil
}
