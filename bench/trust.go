package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// The trust rows (ringcp issue 14): what --verify and --resume cost.
//
//   - ringcp-verify copies with --verify: its time over ringcp's is what
//     the read-back adds, and its --json gives the verify pass's own time.
//   - ringcp+read copies, then reads DST once with fio (O_DIRECT,
//     io_uring, the verify pass's 4 MiB requests and depth 8): the plain
//     read pass the verify pass is held to (at most one read of DST).
//   - ringcp-resume copies with --resume: a state file and an fdatasync
//     barrier every 2 s while the copy runs. Its time over ringcp's is the
//     barriers' cost.

// verifyReadBS and verifyReadDepth are the shape of the verify pass with
// ringcp's defaults: 8 MiB blocks, cut at the 4 MiB cells, 8 in flight.
const (
	verifyReadBS    = 4 << 20
	verifyReadDepth = 8
)

// trustDetail is what a trust row's run measured besides its wall time.
type trustDetail struct {
	VerifySeconds float64 `json:"verify_seconds,omitempty"` // ringcp's verify pass (--json)
	ReadSeconds   float64 `json:"read_seconds,omitempty"`   // fio's read of DST
}

// resumePlan copies with --resume; a block device DST needs a state file
// path, which goes to the temp dir.
func resumePlan(j Job) Plan {
	argv := []string{"ringcp", "--json", "--progress", "none", "--resume"}
	if j.DstDev {
		argv = append(argv, "--state", filepath.Join(os.TempDir(), "ringcp-bench-"+filepath.Base(j.Dst)+".state"))
	}
	argv = append(argv, j.Extra...)
	return Plan{{append(argv, j.Src, j.Dst)}}
}

// copyReadPlan copies, then reads DST with fio.
func copyReadPlan(j Job) Plan {
	return Plan{
		{append(append([]string{"ringcp", "--json", "--progress", "none"}, j.Extra...), j.Src, j.Dst)},
		{{"fio", "--name=read", "--filename=" + j.Dst, "--rw=read", "--direct=1", "--ioengine=io_uring",
			"--bs=" + strconv.Itoa(verifyReadBS), "--iodepth=" + strconv.Itoa(verifyReadDepth),
			"--size=" + strconv.FormatInt(j.Size/4096*4096, 10), "--output-format=json"}},
	}
}

// trustReport is the part of ringcp's --json the trust rows read.
type trustReport struct {
	Resumed int64 `json:"resumed"`
	Verify  *struct {
		Result       string `json:"result"`
		Bytes        int64  `json:"bytes"`
		Milliseconds int64  `json:"milliseconds"`
	} `json:"verify"`
}

// parseVerify checks that the read-back ran over the whole copy and
// passed, and keeps its time.
func parseVerify(out [][]byte, r *Run) error {
	if err := parseRingcp(out, r); err != nil {
		return err
	}
	var tr trustReport
	if err := json.Unmarshal(lastJSON(out[0]), &tr); err != nil {
		return err
	}
	if tr.Verify == nil || tr.Verify.Result != "ok" || tr.Verify.Bytes != r.Size {
		return fmt.Errorf("ringcp --verify --json: %s", lastJSON(out[0]))
	}
	r.Trust = &trustDetail{VerifySeconds: float64(tr.Verify.Milliseconds) / 1000}
	return nil
}

// parseResume checks that the copy started from nothing: a state left by
// an earlier failed run would make it look fast.
func parseResume(out [][]byte, r *Run) error {
	if err := parseRingcp(out, r); err != nil {
		return err
	}
	var tr trustReport
	if err := json.Unmarshal(lastJSON(out[0]), &tr); err != nil {
		return err
	}
	if tr.Resumed != 0 {
		return fmt.Errorf("ringcp --resume resumed %d bytes from a state an earlier run left", tr.Resumed)
	}
	return nil
}

// parseCopyRead keeps fio's read time of DST.
func parseCopyRead(out [][]byte, r *Run) error {
	if err := parseRingcp(out[:1], r); err != nil {
		return err
	}
	b := out[1]
	if i := bytes.IndexByte(b, '{'); i >= 0 {
		b = b[i:]
	}
	var fo fioOutput
	if err := json.Unmarshal(b, &fo); err != nil {
		return fmt.Errorf("fio JSON: %w", err)
	}
	if len(fo.Jobs) != 1 || fo.Jobs[0].Read.IOBytes == 0 || fo.Jobs[0].Runtime == 0 {
		return fmt.Errorf("fio read nothing of DST")
	}
	jb := fo.Jobs[0]
	// Scaled to the whole copy (fio reads whole 4 KiB blocks of it).
	sec := float64(jb.Runtime) / 1e3 * float64(r.Size) / float64(jb.Read.IOBytes)
	r.Trust = &trustDetail{ReadSeconds: sec}
	return nil
}

// trustRounds are a workload's trust figures by round, in seconds.
type trustRounds struct {
	copy, verify, resume, pass, read map[int]float64
}

func collectTrust(runs []*Run) trustRounds {
	t := trustRounds{map[int]float64{}, map[int]float64{}, map[int]float64{}, map[int]float64{}, map[int]float64{}}
	for _, r := range runs {
		if r.Err != nil {
			continue
		}
		switch r.Tool {
		case "ringcp":
			t.copy[r.Round] = r.Wall.Seconds()
		case "ringcp-verify":
			t.verify[r.Round], t.pass[r.Round] = r.Wall.Seconds(), r.Trust.VerifySeconds
		case "ringcp-resume":
			t.resume[r.Round] = r.Wall.Seconds()
		case "ringcp+read":
			t.read[r.Round] = r.Trust.ReadSeconds
		}
	}
	return t
}

// medianRatioCell is the median over rounds of a / b in the same round.
func medianRatioCell(a, b map[int]float64) string {
	var xs []float64
	for k, v := range a {
		if d, ok := b[k]; ok && d > 0 {
			xs = append(xs, v/d)
		}
	}
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", median(xs))
}

func medianOf(m map[int]float64) string {
	var xs []float64
	for _, v := range m {
		xs = append(xs, v)
	}
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", median(xs))
}

// writeTrustTable prints, under a workload's table, the verify pass
// against a plain read pass of DST, and what --verify and --resume add to
// a copy, as medians over rounds of same-round ratios.
func writeTrustTable(w io.Writer, runs []*Run) {
	t := collectTrust(runs)
	if len(t.pass) == 0 && len(t.resume) == 0 {
		return
	}
	fmt.Fprintf(w, "Trust: the verify pass against one plain read of DST (fio, O_DIRECT, %d MiB x %d, the verify pass's shape), "+
		"and what --verify and --resume (a barrier every 2 s) add to a copy; medians over rounds of same-round ratios.\n\n",
		verifyReadBS>>20, verifyReadDepth)
	fmt.Fprintln(w, "| verify pass s | plain read of DST s | verify pass ÷ read | copy+verify ÷ copy | copy --resume ÷ copy |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n\n", medianOf(t.pass), medianOf(t.read), medianRatioCell(t.pass, t.read),
		medianRatioCell(t.verify, t.copy), medianRatioCell(t.resume, t.copy))
}
