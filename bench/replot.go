package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// replot redraws chart.png of a results directory from its runs.csv, for
// when the chart code changed after a long run. It measures nothing.
func replot(dir string) error {
	runs, err := readRunsCSV(filepath.Join(dir, "runs.csv"))
	if err != nil {
		return err
	}
	b := &bench{}
	for _, r := range runs {
		if r.Workload == "sweep" {
			b.sweep = append(b.sweep, r)
			continue
		}
		b.runs = append(b.runs, r)
		if !slices.Contains(b.cfg.Workloads, r.Workload) {
			b.cfg.Workloads = append(b.cfg.Workloads, r.Workload)
		}
	}
	return b.writeChart(filepath.Join(dir, "chart.png"))
}

// readRunsCSV is writeRunsCSV's inverse, by column name.
func readRunsCSV(path string) ([]*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, need := range []string{"workload", "tool", "round", "bytes", "wall_s", "verdict"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: no %s column", path, need)
		}
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	var runs []*Run
	for _, row := range rows[1:] {
		r := &Run{Workload: get(row, "workload"), Tool: get(row, "tool"), Cmd: get(row, "command")}
		r.Round, _ = strconv.Atoi(get(row, "round"))
		r.Order, _ = strconv.Atoi(get(row, "order"))
		r.Size, _ = strconv.ParseInt(get(row, "bytes"), 10, 64)
		r.Wall = seconds(get(row, "wall_s"))
		r.User = seconds(get(row, "user_s"))
		r.Sys = seconds(get(row, "sys_s"))
		kib, _ := strconv.ParseInt(get(row, "max_rss_kib"), 10, 64)
		r.MaxRSS = kib << 10
		switch get(row, "verdict") {
		case "WRONG":
			r.Err = fmt.Errorf("%w: %s", errWrong, get(row, "error"))
		case "FAILED":
			r.Err = errors.New(get(row, "error"))
		}
		if s := get(row, "details"); s != "" {
			if err := json.Unmarshal([]byte(s), &r.details); err != nil {
				return nil, fmt.Errorf("%s: details of %s round %d: %w", path, r.Tool, r.Round, err)
			}
		}
		fromColumns(r, func(name string) string { return get(row, name) })
		runs = append(runs, r)
	}
	return runs, nil
}

// fromColumns fills what a runs.csv from before the details column (its
// "info" was a map of strings) holds in plain columns: ringcp's engine,
// block size and depth, and the sweep's grid point. That is all -replot
// draws.
func fromColumns(r *Run, get func(string) string) {
	if r.Ringcp == nil && get("engine") != "" {
		r.Ringcp = &ringcpReport{Engine: get("engine")}
		r.Ringcp.BlockSize, _ = strconv.ParseInt(get("block_size"), 10, 64)
		r.Ringcp.QueueDepth, _ = strconv.Atoi(get("queue_depth"))
	}
	if r.Sweep == nil && get("sweep_bs") != "" {
		r.Sweep = &sweepPoint{}
		r.Sweep.BS, _ = strconv.ParseInt(get("sweep_bs"), 10, 64)
		r.Sweep.QD, _ = strconv.Atoi(get("sweep_qd"))
	}
}

func seconds(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}
