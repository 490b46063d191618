package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringcp/ringcp/internal/units"
)

// report prints the markdown report on out and, with an output directory,
// writes it there too with the CSVs and the chart.
func (b *bench) report(out io.Writer) error {
	var md bytes.Buffer
	b.writeMarkdown(&md)
	if _, err := out.Write(md.Bytes()); err != nil {
		return err
	}
	if b.cfg.OutDir == "" {
		return nil
	}
	dir := filepath.Join(b.cfg.OutDir, b.started.UTC().Format("20060102-150405")+"-"+strings.Join(b.sizeLabels(""), "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	if err := writeRunsCSV(filepath.Join(dir, "runs.csv"), append(slices.Clone(b.runs), b.sweep...)); err != nil {
		return err
	}
	if err := b.writeSummaryCSV(filepath.Join(dir, "summary.csv")); err != nil {
		return err
	}
	if err := b.writeChart(filepath.Join(dir, "chart.png")); err != nil {
		return err
	}
	b.env.logf("results in %s", dir)
	return nil
}

func (b *bench) writeMarkdown(w io.Writer) {
	mode := fmt.Sprintf("%d rounds", b.cfg.Rounds)
	if b.cfg.Quick {
		mode = "quick mode: correctness only, times are not meaningful"
	}
	fmt.Fprintf(w, "## ringcp bench: %s per copy, %s\n\n", strings.Join(b.sizeLabels(" "), ", "), mode)
	fmt.Fprintf(w, "%s; %s. Page cache dropped before every run; each round runs every tool "+
		"once, in an order rotated by one per round. Time is from start to DST fdatasync'ed; "+
		"MB/s is 10^6 bytes over the median time; \"× ringcp\" is the median over rounds of the "+
		"tool's time divided by ringcp's in the same round (above 1 is slower); \"of ceiling\" "+
		"likewise against fio's concurrent read+write; CPU is user+sys of the tool's processes; "+
		"RSS is the peak, summed over processes that run together.\n\n",
		b.started.UTC().Format("2006-01-02"), machine(b.env.Dir))
	fmt.Fprintf(w, "- found: %s\n", strings.Join(b.found, "; "))
	for _, m := range b.missing {
		fmt.Fprintf(w, "- missing %s\n", m)
	}
	for _, s := range b.skipped {
		fmt.Fprintf(w, "- skipped %s\n", s)
	}
	fmt.Fprintln(w)
	for _, name := range b.cfg.Workloads {
		runs := b.runsOf(name)
		if len(runs) > 0 {
			w2, _ := findWorkload(name)
			b.writeWorkload(w, w2, runs)
			writeTrustTable(w, runs)
		}
	}
	b.writeNBDTargets(w)
	b.writeWebTargets(w)
	b.writeQcow2Targets(w)
	if len(b.sweep) > 0 {
		writeSweepTable(w, b.sweep)
	}
}

// sizeLabels names the sizes copied: -size when a workload or the sweep
// copied the run's random source, and "name SIZE" for each workload that
// brought its own, with sep between: "4GiB", "sparse 16GiB".
func (b *bench) sizeLabels(sep string) []string {
	var labels []string
	main := len(b.sweep) > 0
	for _, name := range b.cfg.Workloads {
		w, err := findWorkload(name)
		if err != nil {
			continue
		}
		if w.Source == nil {
			main = true
			continue
		}
		for _, r := range b.runs {
			if r.Workload == name {
				labels = append(labels, name+sep+sizeLabel(r.Size))
				break
			}
		}
	}
	if main || len(labels) == 0 {
		labels = append([]string{sizeLabel(b.cfg.Size)}, labels...)
	}
	return labels
}

func (b *bench) writeWorkload(w io.Writer, wl *Workload, runs []*Run) {
	if wl.Foreground {
		writeBusy(w, wl, runs, b.cfg.BusyRate)
		return
	}
	rows := summarize(runs)
	fmt.Fprintf(w, "### %s: %s (%s)\n\n", wl.Name, wl.Desc, sizeLabel(runs[0].Size))
	if about := b.about[wl.Name]; about != "" {
		fmt.Fprintf(w, "%s\n\n", about)
	}
	alloc := slices.ContainsFunc(rows, func(s *summary) bool { return s.SrcAlloc > 0 })
	head, rule := "| tool | copies ok | median s | MB/s | × ringcp | of ceiling | CPU s | peak RSS MiB |",
		"|---|---:|---:|---:|---:|---:|---:|---:|"
	if alloc {
		head, rule = head+" DST alloc MiB | SRC alloc MiB |", rule+"---:|---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, s := range rows {
		ok := fmt.Sprintf("%d/%d", s.OK, s.Runs)
		switch {
		case s.Ceiling:
			ok = "(no copy)"
		case s.Wrong:
			ok = "**WRONG** " + ok
		case s.OK < s.Runs:
			ok = "**FAILED** " + ok
		}
		if s.OK == 0 || s.Wrong {
			// A wrong copy is reported as wrong, never as fast.
			fmt.Fprintf(w, "| %s | %s | – | – | – | – | – | %.0f |", s.Tool, ok, mib(s.RSS))
			if alloc {
				fmt.Fprint(w, " – | – |")
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.0f | %s | %s | %.2f | %.0f |", s.Tool, ok,
			s.Wall.Seconds(), s.MBps(), fmtRatio(s.Ratio), fmtPct(s.OfCeil), s.CPU.Seconds(), mib(s.RSS))
		if alloc {
			fmt.Fprintf(w, " %s | %s |", fmtAlloc(s), fmtMiB(s.SrcAlloc))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if slices.Contains(jobsWorkloads, wl.Name) {
		writeJobsTargets(w, rows, runs, b.cfg.Quick)
	}
	if slices.Contains(cdiWorkloads, wl.Name) {
		writeCDITargets(w, runs, b.cfg.Quick)
	}
	if wl.Extra != nil {
		wl.Extra(w, runs)
	}
	for _, s := range rows {
		if s.Tool == baseline && s.Ringcp != nil {
			fmt.Fprintf(w, "ringcp chose: %s.\n", ringcpChoice(s.Ringcp))
		}
		if s.Ceiling && s.OK > 0 {
			read, write := s.fioRates()
			fmt.Fprintf(w, "Ceiling: fio %s, read %.0f MB/s and write %.0f MB/s at once (medians).\n",
				b.shapes[wl.Name], read, write)
		}
	}
	for _, s := range rows {
		if !s.Ceiling && s.OfCeil > 1.05 {
			fmt.Fprintf(w, "Note: %s beat the ceiling in the median round; the ceiling was measured "+
				"low (load elsewhere during calibration, or a shape outside fio's grid) and is "+
				"a lower bound here.\n", s.Tool)
			break
		}
	}
	for _, s := range rows {
		if s.OverAlloc() && s.OK > 0 && !s.Wrong {
			fmt.Fprintf(w, "- %s: DST allocates %s, more than SRC's %s (+%s); the target is at most SRC's.\n",
				s.Tool, units.Format(s.DstAlloc), units.Format(s.SrcAlloc), units.Format(s.DstAlloc-s.SrcAlloc))
		}
	}
	for _, s := range rows {
		if s.Bad != "" {
			fmt.Fprintf(w, "- %s: %s\n", s.Tool, s.Bad)
		}
	}
	fmt.Fprintf(w, "\n<details><summary>commands</summary>\n\n```\n")
	for _, s := range rows {
		fmt.Fprintf(w, "%-12s %s\n", s.Tool, s.Cmd)
	}
	fmt.Fprintf(w, "```\n</details>\n\n")
}

// ringcpChoice says what ringcp chose and, for a sparse-aware copy, how
// it accounted for the bytes.
func ringcpChoice(rep *ringcpReport) string {
	s := fmt.Sprintf("engine %s, block size %s, queue depth %d, O_DIRECT src=%v dst=%v",
		rep.Engine, sizeLabel(rep.BlockSize), rep.QueueDepth, rep.DirectSrc, rep.DirectDst)
	if rep.FallbackReason != "" {
		s += ", fallback: " + rep.FallbackReason
	}
	if rep.BytesHoles > 0 || rep.BytesZeroed > 0 {
		s += fmt.Sprintf("; read %s, wrote %s of data, left %s as holes, zeroed %s",
			units.Format(rep.BytesRead), units.Format(rep.Bytes), units.Format(rep.BytesHoles),
			units.Format(rep.BytesZeroed))
	}
	return s
}

// fmtAlloc is DST's allocation in MiB, in bold with a mark when it is
// larger than SRC's.
func fmtAlloc(s *summary) string {
	if s.OverAlloc() {
		return "**" + fmtMiB(s.DstAlloc) + " > SRC**"
	}
	return fmtMiB(s.DstAlloc)
}

func fmtMiB(n int64) string { return fmt.Sprintf("%.1f", mib(n)) }

func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtPct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// writeRunsCSV writes one row per run: the times, the verdict, a few
// columns for spreadsheets (ringcp's engine, block size and depth; the
// sweep's grid point) and every typed detail as JSON in the last cell.
func writeRunsCSV(path string, runs []*Run) error {
	rows := [][]string{{"workload", "tool", "round", "order", "bytes", "wall_s", "mb_per_s",
		"user_s", "sys_s", "max_rss_kib", "verdict", "error", "engine", "block_size",
		"queue_depth", "sweep_bs", "sweep_qd", "command", "details"}}
	for _, r := range runs {
		errs := ""
		if r.Err != nil {
			errs = r.Err.Error()
		}
		var engine, bs, qd, sweepBS, sweepQD string
		if rep := r.Ringcp; rep != nil {
			engine, bs, qd = rep.Engine, strconv.FormatInt(rep.BlockSize, 10), strconv.Itoa(rep.QueueDepth)
		}
		if pt := r.Sweep; pt != nil {
			sweepBS, sweepQD = strconv.FormatInt(pt.BS, 10), strconv.Itoa(pt.QD)
		}
		js, err := json.Marshal(r.details)
		if err != nil {
			return err
		}
		rows = append(rows, []string{r.Workload, r.Tool, strconv.Itoa(r.Round), strconv.Itoa(r.Order),
			strconv.FormatInt(r.Size, 10), secs(r.Wall), fmt.Sprintf("%.1f", mbps(r.Size, r.Wall)),
			secs(r.User), secs(r.Sys), strconv.FormatInt(r.MaxRSS>>10, 10), r.Verdict(), errs,
			engine, bs, qd, sweepBS, sweepQD, r.Cmd, string(js)})
	}
	return writeCSV(path, rows)
}

func (b *bench) writeSummaryCSV(path string) error {
	rows := [][]string{{"workload", "tool", "runs", "ok", "verdict", "median_s", "mb_per_s",
		"ratio_to_ringcp", "of_ceiling", "cpu_s", "peak_rss_mib", "dst_alloc_bytes", "src_alloc_bytes"}}
	for _, name := range b.cfg.Workloads {
		runs := copyRuns(b.runsOf(name))
		if len(runs) == 0 {
			continue
		}
		for _, s := range summarize(runs) {
			v := "ok"
			if s.Wrong {
				v = "WRONG"
			} else if s.OK < s.Runs {
				v = "FAILED"
			}
			rows = append(rows, []string{name, s.Tool, strconv.Itoa(s.Runs), strconv.Itoa(s.OK), v,
				secs(s.Wall), fmt.Sprintf("%.1f", s.MBps()), fmt.Sprintf("%.3f", s.Ratio),
				fmt.Sprintf("%.3f", s.OfCeil), secs(s.CPU), fmt.Sprintf("%.1f", mib(s.RSS)),
				allocCell(s, s.DstAlloc), allocCell(s, s.SrcAlloc)})
		}
	}
	return writeCSV(path, rows)
}

// allocCell is an allocation for the CSV, empty where none was measured.
func allocCell(s *summary, n int64) string {
	if s.SrcAlloc == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.WriteAll(rows)
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runsOf is every run of one workload, in the order they ran.
func (b *bench) runsOf(workload string) []*Run {
	var runs []*Run
	for _, r := range b.runs {
		if r.Workload == workload {
			runs = append(runs, r)
		}
	}
	return runs
}
