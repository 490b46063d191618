package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Many disks at once (ringcp --jobs, issue 15): the run's source cut in
// four jobs, copied together by one ringcp --jobs, and by four processes
// of ringcp, dd (the AIX technote's parallel dd's, one per volume),
// sgp_dd and qemu-img convert. The reference is one ringcp copying the
// whole source: the same total bytes. Wall time runs from the first
// process's start to the last DST fdatasync'ed; CPU and peak RSS add up
// over processes that run together.

// jobsParts is how many jobs a jobs workload copies at once.
const jobsParts = 4

// jobsTools are the tools a jobs workload runs: "ringcp" is the
// reference, one copy of the same total bytes.
var jobsTools = []string{"ringcp", "ringcp-jobs", "ringcp-4proc", "dd-4proc", "sgp_dd-4proc", "qemu-img-4proc"}

var jobsWorkloads = []string{"jobs-file", "jobs-blockdev"}

// offsetContent is the bytes of c from off on: one job's part of the
// run's source.
type offsetContent struct {
	c   Content
	off int64
}

func (o offsetContent) Fill(off int64, p []byte) { o.c.Fill(o.off+off, p) }

// jobSizes cuts total into jobsParts parts, each a multiple of unit but
// the last, which takes the rest.
func jobSizes(total, unit int64) []int64 {
	part := total / jobsParts / unit * unit
	sizes := make([]int64, jobsParts)
	for i := range sizes {
		sizes[i] = part
	}
	sizes[jobsParts-1] = total - part*(jobsParts-1)
	return sizes
}

// jobsSpace is what a jobs workload adds to the run's source and one
// DST: the four job sources (files), or the four DST images (devices).
func jobsSpace(cfg *Config) int64 { return cfg.Size }

// setupJobsFile writes the run's source again as four files and pairs
// each with a new DST; the reference copies the run's source whole.
func setupJobsFile(e *Env, src *Source) (*Pair, error) {
	p, err := setupFile(e, src)
	if err != nil {
		return nil, err
	}
	var off int64
	for i, n := range jobSizes(src.Size, 4096) {
		job := &Pair{Src: filepath.Join(e.Dir, fmt.Sprintf("src-job%d.bin", i)), Dst: filepath.Join(e.Dir, fmt.Sprintf("dst-job%d.bin", i)),
			Size: n, Content: offsetContent{src.Content, off}}
		job.Reset = func() error { return removeIfThere(job.Dst) }
		p.Jobs, off = append(p.Jobs, job), off+n
		if err := writeSource(job.Src, job.Content, n); err != nil {
			return nil, err
		}
	}
	close := p.Close
	p.Close = func() {
		for _, j := range p.Jobs {
			os.Remove(j.Src)
			os.Remove(j.Dst)
		}
		close()
	}
	return withJobs(e, p)
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}

// setupJobsBlockdev shows four ranges of the run's source as read-only
// loop devices, and makes four preallocated images the DSTs' loop
// devices; the reference copies the whole source's loop device to an
// image of the whole size, as blockdev does. The DSTs are images of their
// own: a loop device over a range of the reference's image would show
// its bytes, and ringcp refuses a DST that another loop device shows.
// All loops have direct-io on.
func setupJobsBlockdev(e *Env, src *Source) (*Pair, error) {
	p, err := setupBlockdev(e, src)
	if err != nil {
		return nil, err
	}
	var l loopSet
	e.onClose(l.detachAll)
	var imgs []string
	close := p.Close
	p.Close = func() {
		l.detachAll()
		for _, img := range imgs {
			os.Remove(img)
		}
		close()
	}
	var off int64
	for i, n := range jobSizes(p.Size, 512) {
		img := filepath.Join(e.Dir, fmt.Sprintf("dst-job%d.img", i))
		imgs = append(imgs, img)
		job, err := loopJob(e, &l, src, off, n, img)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.Jobs, off = append(p.Jobs, job), off+n
	}
	return withJobs(e, p)
}

// loopJob pairs a read-only loop device over n bytes of src from off
// with one over img, a new preallocated image of n bytes.
func loopJob(e *Env, l *loopSet, src *Source, off, n int64, img string) (*Pair, error) {
	if err := preallocate(img, n); err != nil {
		return nil, err
	}
	sdev, err := l.attachRange(e, src.Path, off, n, true)
	if err != nil {
		return nil, err
	}
	ddev, err := l.attach(e, img, false)
	if err != nil {
		return nil, err
	}
	return &Pair{Src: sdev, Dst: ddev, Size: n, SrcDev: true, DstDev: true, Content: offsetContent{src.Content, off},
		Reset: func() error { return wipeDevice(ddev, img, n) }}, nil
}

// attachRange attaches n bytes of file from off, as a loop device.
func (l *loopSet) attachRange(e *Env, file string, off, n int64, readOnly bool) (string, error) {
	return l.attach(e, file, readOnly, "--offset", fmt.Sprint(off), "--sizelimit", fmt.Sprint(n))
}

// withJobs writes the --jobs list and makes Reset reset every DST.
func withJobs(e *Env, p *Pair) (*Pair, error) {
	p.List = filepath.Join(e.Dir, "jobs.list")
	var list bytes.Buffer
	for _, j := range p.Jobs {
		fmt.Fprintf(&list, "%s %s\n", j.Src, j.Dst)
	}
	if err := os.WriteFile(p.List, list.Bytes(), 0o644); err != nil {
		return nil, err
	}
	reset, jobs := p.Reset, p.Jobs
	p.Reset = func() error {
		for _, j := range jobs {
			if j.Reset != nil {
				if err := j.Reset(); err != nil {
					return err
				}
			}
		}
		return reset()
	}
	return p, nil
}

// copies are the pairs a tool's run writes: each job's for a tool that
// copies the jobs, else the pair itself.
func (j Job) copies(t *Tool) []*Pair {
	if t.Batch {
		return j.Jobs
	}
	return []*Pair{j.Pair}
}

// forCopies calls fn on each copy of the run, stopping at an error.
func forCopies(j Job, t *Tool, fn func(p *Pair) error) error {
	for _, p := range j.copies(t) {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// eachJob runs plan for every job at once: stage k of each job's plan
// runs in stage k of the whole.
func eachJob(plan func(j Job) Plan) func(j Job) Plan {
	return func(j Job) Plan {
		var all Plan
		for _, p := range j.Jobs {
			for k, stage := range plan(Job{Pair: p, Extra: j.Extra}) {
				if k == len(all) {
					all = append(all, nil)
				}
				all[k] = append(all[k], stage...)
			}
		}
		return all
	}
}

func ringcpJobsPlan(j Job) Plan {
	argv := append([]string{"ringcp", "--json", "--progress", "none"}, j.Extra...)
	return Plan{{append(argv, "--jobs", j.List)}}
}

// ringcpJobsReport is the part of `ringcp --json --jobs` the bench reads.
type ringcpJobsReport struct {
	Jobs  []ringcpReport `json:"jobs"`
	Total struct {
		Complete   int   `json:"complete"`
		Bytes      int64 `json:"bytes"`
		BytesHoles int64 `json:"bytes_holes"`
		Zeroed     int64 `json:"bytes_zeroed"`
		BlockSize  int64 `json:"block_size"`
		QueueDepth int   `json:"queue_depth"`
	} `json:"total"`
}

// parseRingcpJobs checks that every job completed and the bytes add up,
// and records the engine and the shared buffers (block size, depth).
func parseRingcpJobs(out [][]byte, r *Run) error {
	var rep ringcpJobsReport
	if err := json.Unmarshal(lastJSON(out[0]), &rep); err != nil {
		return fmt.Errorf("ringcp --json --jobs: %w", err)
	}
	t := rep.Total
	if t.Complete != jobsParts || len(rep.Jobs) != jobsParts {
		return fmt.Errorf("ringcp --jobs: %d of %d jobs complete", t.Complete, len(rep.Jobs))
	}
	if sum := t.Bytes + t.BytesHoles + t.Zeroed; sum != r.Size {
		return fmt.Errorf("ringcp --jobs accounts for %d bytes, want %d", sum, r.Size)
	}
	first := rep.Jobs[0]
	first.BlockSize, first.QueueDepth = t.BlockSize, t.QueueDepth
	r.Ringcp = &first
	return nil
}

// parseEachRingcp reads the four ringcp --json objects of ringcp-4proc.
func parseEachRingcp(out [][]byte, r *Run) error {
	var sum int64
	for i, o := range out {
		var rep ringcpReport
		if err := json.Unmarshal(lastJSON(o), &rep); err != nil {
			return fmt.Errorf("ringcp %d of %d --json: %w", i+1, len(out), err)
		}
		sum += rep.Bytes + rep.BytesHoles + rep.BytesZeroed
		if i == 0 {
			r.Ringcp = &rep
		}
	}
	if sum != r.Size {
		return fmt.Errorf("the ringcps account for %d bytes, want %d", sum, r.Size)
	}
	return nil
}

// lastJSON is the last line of out that starts an object.
func lastJSON(out []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] == '{' {
			last = append(last[:0], line...)
		}
	}
	return last
}

// Targets of issue 15 for ringcp --jobs.
const (
	jobsVsOne   = 1.05     // at most this × one ringcp copying the same bytes
	jobsVsSgpDD = 0.8      // at most this × four sgp_dd processes
	jobsRSSPad  = 16 << 20 // peak RSS at most one copy's buffers plus this
)

// writeJobsTargets says, under a jobs workload's table, how ringcp
// --jobs did against its targets: medians over rounds of its time over
// the reference's and over four sgp_dd's in the same round, and its peak
// RSS against the buffers one copy holds (the reference's block size ×
// queue depth) plus 16 MiB.
func writeJobsTargets(w io.Writer, rows []*summary, runs []*Run, quick bool) {
	byTool := map[string]*summary{}
	for _, s := range rows {
		byTool[s.Tool] = s
	}
	jobs, one := byTool["ringcp-jobs"], byTool["ringcp"]
	if jobs == nil || one == nil || jobs.OK == 0 || one.Ringcp == nil {
		return
	}
	var lines []string
	lines = append(lines, target("time over one ringcp of the same bytes", roundRatio(runs, "ringcp-jobs", "ringcp"), jobsVsOne))
	if byTool["sgp_dd-4proc"] != nil {
		lines = append(lines, target("time over four sgp_dd", roundRatio(runs, "ringcp-jobs", "sgp_dd-4proc"), jobsVsSgpDD))
	}
	budget := one.Ringcp.BlockSize*int64(one.Ringcp.QueueDepth) + jobsRSSPad
	lines = append(lines, fmt.Sprintf("peak RSS %.0f MiB, at most one copy's buffers + 16 MiB = %.0f MiB: %s",
		mib(jobs.RSS), mib(budget), metWord(float64(jobs.RSS) <= float64(budget))))
	note := ""
	if quick {
		note = " (quick mode: the times say nothing)"
	}
	fmt.Fprintf(w, "Targets of ringcp --jobs%s: %s.\n\n", note, strings.Join(lines, "; "))
}

func target(what string, ratio, limit float64) string {
	if math.IsNaN(ratio) {
		return what + ": no round to compare"
	}
	return fmt.Sprintf("%s %.2f, at most %.2f: %s", what, ratio, limit, metWord(ratio <= limit))
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// roundRatio is the median over rounds of a's time over b's, both good;
// NaN when no round has both.
func roundRatio(runs []*Run, a, b string) float64 {
	walls := map[string]map[int]time.Duration{a: {}, b: {}}
	for _, r := range runs {
		if m, ok := walls[r.Tool]; ok && r.Err == nil {
			m[r.Round] = r.Wall
		}
	}
	var ratios []float64
	for round, wa := range walls[a] {
		if wb, ok := walls[b][round]; ok && wb > 0 {
			ratios = append(ratios, float64(wa)/float64(wb))
		}
	}
	return medianOr(ratios)
}
