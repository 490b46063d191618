package main

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringcp/ringcp/internal/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The sweep runs ringcp over a grid of block sizes and queue depths on the
// file workload, to show where the defaults sit on the curve. This file
// holds all of it: the grid, the runs, the table and the chart panel.

// sweepConfig is the -sweep grid.
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

// writeSweepTable prints MB/s per block size (rows) and queue depth
// (columns), medians over the sweep's rounds, and ringcp's own choice.
func writeSweepTable(w io.Writer, runs []*Run) {
	grid, bss, qds := sweepGrid(runs)
	fmt.Fprintf(w, "### sweep: ringcp block size × queue depth, file workload (%s), MB/s\n\n", sizeLabel(runs[0].Size))
	fmt.Fprint(w, "| block size |")
	for _, q := range qds {
		fmt.Fprintf(w, " qd %d |", q)
	}
	fmt.Fprint(w, "\n|---|"+strings.Repeat("---:|", len(qds))+"\n")
	for _, bs := range bss {
		fmt.Fprintf(w, "| %s |", sizeLabel(bs))
		for _, q := range qds {
			if v, ok := grid[sweepPoint{bs, q}]; ok && v > 0 {
				fmt.Fprintf(w, " %.0f |", v)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	if def, rep := sweepDefault(runs); def > 0 && rep != nil {
		fmt.Fprintf(w, "\nringcp's defaults (%s): %.0f MB/s.\n", ringcpChoice(rep), def)
	}
	fmt.Fprintln(w)
}

// sweepGrid returns the median MB/s of each grid point (0 where every run
// failed), and the sorted block sizes and depths.
func sweepGrid(runs []*Run) (map[sweepPoint]float64, []int64, []int) {
	walls := map[sweepPoint][]time.Duration{}
	var bss []int64
	var qds []int
	for _, r := range runs {
		if r.Sweep == nil || r.Sweep.BS == 0 {
			continue
		}
		pt := *r.Sweep
		if _, seen := walls[pt]; !seen {
			walls[pt] = nil
			if !slices.Contains(bss, pt.BS) {
				bss = append(bss, pt.BS)
			}
			if !slices.Contains(qds, pt.QD) {
				qds = append(qds, pt.QD)
			}
		}
		if r.Err == nil {
			walls[pt] = append(walls[pt], r.Wall)
		}
	}
	slices.Sort(bss)
	slices.Sort(qds)
	grid := map[sweepPoint]float64{}
	for pt, ws := range walls {
		if len(ws) > 0 {
			grid[pt] = mbps(runs[0].Size, median(ws))
		} else {
			grid[pt] = 0
		}
	}
	return grid, bss, qds
}

// sweepDefault is the median MB/s of the sweep's default runs and what
// ringcp chose in them (nil if it did not say).
func sweepDefault(runs []*Run) (float64, *ringcpReport) {
	var ws []time.Duration
	var rep *ringcpReport
	for _, r := range runs {
		if r.Sweep != nil && r.Sweep.BS == 0 && r.Err == nil {
			ws = append(ws, r.Wall)
			rep = cmp.Or(r.Ringcp, rep)
		}
	}
	if len(ws) == 0 {
		return 0, nil
	}
	return mbps(runs[0].Size, median(ws)), rep
}

// sweepPanel plots MB/s against block size (log2 axis) with one line per
// queue depth; ringcp's default choice is a black cross.
func sweepPanel(runs []*Run) (*plot.Plot, error) {
	grid, bss, qds := sweepGrid(runs)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("ringcp sweep, file workload (%s per copy)", sizeLabel(runs[0].Size))
	p.X.Label.Text = "block size"
	p.Y.Label.Text = "MB/s"
	p.Legend.Top = true
	var ticks plot.ConstantTicks
	for _, bs := range bss {
		ticks = append(ticks, plot.Tick{Value: math.Log2(float64(bs)), Label: units.Exact(bs)})
	}
	p.X.Tick.Marker = ticks
	for i, qd := range qds {
		var xys plotter.XYs
		for _, bs := range bss {
			if v := grid[sweepPoint{bs, qd}]; v > 0 {
				xys = append(xys, plotter.XY{X: math.Log2(float64(bs)), Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(line, pts)
		p.Legend.Add("qd "+strconv.Itoa(qd), line, pts)
	}
	if def, rep := sweepDefault(runs); def > 0 && rep != nil && rep.BlockSize > 0 {
		s, err := plotter.NewScatter(plotter.XYs{{X: math.Log2(float64(rep.BlockSize)), Y: def}})
		if err != nil {
			return nil, err
		}
		s.Shape, s.Radius, s.Color = draw.CrossGlyph{}, vg.Points(6), color.Black
		p.Add(s)
		p.Legend.Add("ringcp default (qd "+strconv.Itoa(rep.QueueDepth)+")", s)
	}
	// Zero-based, so that noise does not look like a cliff, with headroom
	// above the curves for the legend.
	p.Y.Min = 0
	p.Y.Max *= 1.8
	return p, nil
}
