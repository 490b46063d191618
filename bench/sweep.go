package main

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"github.com/ringcp/ringcp/internal/units"
)

// sweepConfig is the -sweep grid: ringcp's block size against its queue
// depth on the file workload, to show where the defaults sit on the curve.
type sweepConfig struct {
	On     bool
	BS     []int64
	QD     []int
	Size   int64 // 0: the run's -size
	Rounds int
}

var (
	defaultSweepBS = []int64{256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20}
	defaultSweepQD = []int{1, 2, 4, 8, 16, 32, 64}
)

// sweepPoint is one grid point; BS == 0 is ringcp's own choice.
type sweepPoint struct {
	BS int64 `json:"bs"`
	QD int   `json:"qd"`
}

func (p sweepPoint) flags() []string {
	if p.BS == 0 {
		return nil
	}
	return []string{"--block-size", units.Exact(p.BS), "--queue-depth", strconv.Itoa(p.QD)}
}

// runSweep copies the sweep source once per grid point per round, in a
// fresh random order each round, plus one run with ringcp's defaults per
// round so that the default is measured under the same conditions.
func (b *bench) runSweep(ctx context.Context) error {
	t, _ := toolByName("ringcp")
	if _, ok := b.bins["ringcp"]; !ok {
		b.skipped = append(b.skipped, "sweep: ringcp is missing")
		return nil
	}
	src, err := b.mainSource()
	if err != nil {
		return err
	}
	if s := b.cfg.Sweep.Size; s > 0 && s != src.Size {
		src = &Source{Path: filepath.Join(b.env.Dir, "src-sweep.bin"), Size: s, Content: src.Content}
		if err := writeSource(src.Path, src.Content, src.Size); err != nil {
			return err
		}
	}
	w := &Workload{Name: "sweep", Setup: setupFile}
	p, err := w.Setup(b.env, src)
	if err != nil {
		return err
	}
	defer p.Close()
	points := []sweepPoint{{}}
	for _, bs := range b.cfg.Sweep.BS {
		for _, qd := range b.cfg.Sweep.QD {
			points = append(points, sweepPoint{bs, qd})
		}
	}
	rng := rand.New(rand.NewPCG(b.cfg.Seed, 1))
	for round := 1; round <= max(b.cfg.Sweep.Rounds, 1); round++ {
		rng.Shuffle(len(points), func(i, j int) { points[i], points[j] = points[j], points[i] })
		for i, pt := range points {
			r := b.runOne(ctx, w, t, Job{Pair: p, Extra: pt.flags()}, round, i+1)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.Sweep = &pt
			b.sweep = append(b.sweep, r)
			b.logRun(r, len(points))
		}
	}
	return nil
}
