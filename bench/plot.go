package main

import (
	"fmt"
	"image/color"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	colorCeiling = color.RGBA{150, 150, 150, 255}
	colorRingcp  = color.RGBA{31, 119, 180, 255}
	colorPeer    = color.RGBA{255, 127, 14, 255}
)

// writeChart draws one panel per workload (median MB/s per tool, as
// horizontal bars so the names stay readable) and, after a sweep, the
// block-size curves, one line per queue depth, into one PNG.
func (b *bench) writeChart(path string) error {
	type panel struct {
		p *plot.Plot
		h vg.Length
	}
	var panels []panel
	for _, name := range b.cfg.Workloads {
		runs := copyRuns(b.runsOf(name))
		if len(runs) > 0 {
			p, err := barPanel(name, summarize(runs))
			if err != nil {
				return err
			}
			panels = append(panels, panel{p, 9 * vg.Centimeter})
		}
	}
	if len(b.sweep) > 0 {
		p, err := sweepPanel(b.sweep)
		if err != nil {
			return err
		}
		// Taller, so the legend has room above the curves.
		panels = append(panels, panel{p, 14 * vg.Centimeter})
	}
	if len(panels) == 0 {
		return nil
	}
	var total vg.Length
	for _, pn := range panels {
		total += pn.h
	}
	img := vgimg.New(20*vg.Centimeter, total)
	dc := draw.New(img)
	const pad = 3 * vg.Millimeter
	top := total // panels stack downwards from the top edge
	for _, pn := range panels {
		pn.p.Draw(draw.Crop(dc, pad, -pad, top-pn.h+pad, top-total-pad))
		top -= pn.h
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// barPanel draws rows bottom-up in reverse, so the table's first row (the
// ceiling) is on top. Wrong or failed tools get no bar, only the word.
func barPanel(workload string, rows []*summary) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: median MB/s (%s per copy)", workload, sizeLabel(rows[0].Size))
	p.X.Label.Text = "MB/s"
	p.X.Min = 0
	names := make([]string, len(rows))
	var labels plotter.XYLabels
	for i, s := range rows {
		y := len(rows) - 1 - i
		names[y] = s.Tool
		v, text := s.MBps(), fmt.Sprintf(" %.0f", s.MBps())
		if s.OK == 0 || s.Wrong {
			v, text = 0, " WRONG"
			if !s.Wrong {
				text = " FAILED"
			}
		}
		bar, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(14))
		if err != nil {
			return nil, err
		}
		bar.Horizontal, bar.XMin = true, float64(y)
		bar.LineStyle.Width = 0
		switch {
		case s.Ceiling:
			bar.Color = colorCeiling
		case strings.HasPrefix(s.Tool, baseline):
			bar.Color = colorRingcp
		default:
			bar.Color = colorPeer
		}
		p.Add(bar)
		labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(y)})
		labels.Labels = append(labels.Labels, text)
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(l)
	p.NominalY(names...)
	p.X.Max *= 1.12 // room for the labels
	return p, nil
}
