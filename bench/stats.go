package main

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// summary is one tool's row for one workload.
type summary struct {
	Tool    string
	Ceiling bool
	Runs    int
	OK      int
	Bad     string        // first wrong or failed run's error, if any
	Wrong   bool          // some run made a wrong copy: no speed shown
	Wall    time.Duration // median over the good runs
	Size    int64
	Ratio   float64       // median over rounds of wall / ringcp's wall
	OfCeil  float64       // median over rounds of ceiling wall / wall
	CPU     time.Duration // median
	RSS     int64         // peak over runs
	// DstAlloc is the largest DST allocation over the good runs and
	// SrcAlloc SRC's, where the workload measures them (else 0).
	DstAlloc, SrcAlloc int64
	Cmd                string
	Ringcp             *ringcpReport // the last good run's: ringcp's choices
	good               []*Run
}

// fioRates is the median read and write MB/s of the good ceiling runs.
func (s *summary) fioRates() (read, write float64) {
	var rs, ws []float64
	for _, r := range s.good {
		if r.Fio != nil {
			rs, ws = append(rs, r.Fio.ReadMBps), append(ws, r.Fio.WriteMBps)
		}
	}
	return median(rs), median(ws)
}

func (s *summary) MBps() float64 { return mbps(s.Size, s.Wall) }

// OverAlloc says the copy took more room than its source.
func (s *summary) OverAlloc() bool { return s.SrcAlloc > 0 && s.DstAlloc > s.SrcAlloc }

// baseline is the tool the per-round ratios divide by.
const baseline = "ringcp"

// summarize folds the runs of one workload into rows, in table order:
// the ceiling first, then the good tools fastest first, then the bad.
func summarize(runs []*Run) []*summary {
	byTool := map[string][]*Run{}
	var order []string
	// The same round's runs of ringcp and of the ceiling, for the ratios.
	base, ceil := map[int]time.Duration{}, map[int]time.Duration{}
	for _, r := range runs {
		if _, ok := byTool[r.Tool]; !ok {
			order = append(order, r.Tool)
		}
		byTool[r.Tool] = append(byTool[r.Tool], r)
		if r.Err == nil && r.Tool == baseline {
			base[r.Round] = r.Wall
		}
		if t, _ := toolByName(r.Tool); r.Err == nil && t != nil && t.Ceiling {
			ceil[r.Round] = r.Wall
		}
	}
	var rows []*summary
	for _, name := range order {
		rows = append(rows, summarizeTool(byTool[name], base, ceil))
	}
	slices.SortStableFunc(rows, func(a, b *summary) int {
		ka, kb := rowKey(a), rowKey(b)
		return cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1]))
	})
	return rows
}

func rowKey(s *summary) [2]int64 {
	switch {
	case s.Ceiling:
		return [2]int64{0, 0}
	case s.OK == s.Runs && s.Runs > 0:
		return [2]int64{1, int64(s.Wall)}
	}
	return [2]int64{2, 0}
}

func summarizeTool(runs []*Run, base, ceil map[int]time.Duration) *summary {
	t, _ := toolByName(runs[0].Tool)
	s := &summary{Tool: runs[0].Tool, Ceiling: t != nil && t.Ceiling, Runs: len(runs),
		Size: runs[0].Size, Cmd: runs[0].Cmd, Ratio: math.NaN(), OfCeil: math.NaN()}
	var walls, cpus []time.Duration
	var ratios, ofCeil []float64
	for _, r := range runs {
		s.RSS = max(s.RSS, r.MaxRSS)
		if r.Err != nil {
			if s.Bad == "" {
				s.Bad = r.Err.Error()
			}
			s.Wrong = s.Wrong || r.Verdict() == "WRONG"
			continue
		}
		s.OK++
		if r.Ringcp != nil {
			s.Ringcp = r.Ringcp
		}
		if r.SrcAlloc > 0 {
			s.DstAlloc = max(s.DstAlloc, r.DstAlloc)
			s.SrcAlloc = r.SrcAlloc
		}
		s.good = append(s.good, r)
		walls = append(walls, r.Wall)
		cpus = append(cpus, r.CPU())
		if b, ok := base[r.Round]; ok {
			ratios = append(ratios, r.Wall.Seconds()/b.Seconds())
		}
		if c, ok := ceil[r.Round]; ok {
			ofCeil = append(ofCeil, c.Seconds()/r.Wall.Seconds())
		}
	}
	s.Wall = median(walls)
	s.CPU = median(cpus)
	if len(ratios) > 0 {
		s.Ratio = median(ratios)
	}
	if len(ofCeil) > 0 {
		s.OfCeil = median(ofCeil)
	}
	return s
}

// median of a non-empty slice; the mean of the middle two for even n.
func median[T time.Duration | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianOr is the median, NaN (shown "–") when there is nothing to take it of.
func medianOr(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return median(xs)
}
