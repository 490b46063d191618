package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// The machine progress formats are read here by the parsers of the
// programs that would run ringcp, transcribed from their sources, and
// first shown to read the real tool ringcp stands in for.

// KubeVirt CDI, pkg/image/qemu.go: matcherString, applied to each piece
// of qemu-img's stdout and stderr split at \r or \n (pkg/system/prlimit.go
// scanLinesWithCR). It reads 0.00 to 99.99; CDI sets 100 itself.
var cdiProgress = regexp.MustCompile(`\((\d?\d\.\d\d)\/100%\)`)

// Proxmox VE, PVE/QemuServer.pm qemu_img_convert: the parser matched
// against each line of stdout, which PVE::Tools::run_command cuts at \n,
// \r\n, \r or backspaces.
var proxmoxProgress = regexp.MustCompile(`\((\S+)\/100\%\)`)

func cdiValues(out []byte) []float64 {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && len(data) == 0 {
			return 0, nil, nil
		}
		if i := bytes.IndexByte(data, '\r'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var vs []float64
	for sc.Scan() {
		if m := cdiProgress.FindStringSubmatch(sc.Text()); len(m) == 2 {
			v, _ := strconv.ParseFloat(m[1], 64)
			vs = append(vs, v)
		}
	}
	return vs
}

func proxmoxValues(out []byte) []float64 {
	var vs []float64
	for _, line := range regexp.MustCompile(`\r\n?|\n|\x08+`).Split(string(out), -1) {
		if m := proxmoxProgress.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return append(vs, -1) // a percent Proxmox would print as garbage
			}
			vs = append(vs, v)
		}
	}
	return vs
}

// incusValues is Incus's internal/server/apparmor/qemuimg.go handleWriter,
// applied to each write to stdout: trim "(%) " and white space, split at
// "/", parse the first part; a write it cannot parse is skipped.
func incusValues(writes [][]byte) []float64 {
	var vs []float64
	for _, b := range writes {
		ss := strings.Split(strings.Trim(string(b), "(%) \t\n\v\f\r"), "/")
		if f, err := strconv.ParseFloat(ss[0], 64); err == nil {
			vs = append(vs, f)
		}
	}
	return vs
}

// writes records every Write separately, as a pipe reader that keeps up
// would see them.
type writes struct {
	mu  sync.Mutex
	all [][]byte
}

func (w *writes) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, bytes.Clone(b))
	return len(b), nil
}

func (w *writes) bytes() []byte { return bytes.Join(w.all, nil) }

// progressCopy runs ringcp in-process on a 64 MiB SRC, slowly enough
// (64 KiB requests one at a time) for many progress lines at a 2 ms
// interval, and checks the copy.
func progressCopy(t *testing.T, args ...string) (stdout *writes, stderr *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomFile(t, src, 64<<20+123, 21)
	stdout, stderr = &writes{}, &bytes.Buffer{}
	argv := append([]string{"-b", "64k", "-q", "1", "--progress-interval", "2ms"}, args...)
	if code := Run(append(argv, src, dst), stdout, stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("DST differs from SRC (%v)", err)
	}
	return stdout, stderr
}

// rising checks values go from below 100 up to 100 (or, for CDI, stay
// below it), never down, and that there are several.
func rising(t *testing.T, who string, vs []float64, ends100 bool) {
	t.Helper()
	if len(vs) < 3 {
		t.Fatalf("%s read %d values (%v): want several", who, len(vs), vs)
	}
	for i, v := range vs {
		if v < 0 || v > 100 || (i > 0 && v < vs[i-1]) {
			t.Fatalf("%s read %v: not rising from 0 to 100", who, vs)
		}
	}
	if last := vs[len(vs)-1]; ends100 != (last == 100) {
		t.Fatalf("%s read %v: last %v", who, vs, last)
	}
}

// TestParsersReadQemuImg: the transcribed parsers read the real qemu-img
// convert -p (else the tests below would prove nothing).
func TestParsersReadQemuImg(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 32<<20, 3)
	out, err := exec.Command("qemu-img", "convert", "-p", "-f", "raw", "-O", "raw", src, filepath.Join(dir, "dst")).Output()
	if err != nil {
		t.Fatal(err)
	}
	rising(t, "CDI on qemu-img", cdiValues(out), false)
	rising(t, "Proxmox on qemu-img", proxmoxValues(out), true)
	recs := bytes.SplitAfter(out, []byte("\r")) // qemu-img flushes each record: one write each
	rising(t, "Incus on qemu-img", incusValues(recs), true)
}

// qemuRecord is one record as qemu-img writes it.
var qemuRecord = regexp.MustCompile(`^    \(\d{1,3}\.\d\d/100%\)\r$`)

// TestProgressQemu: --progress qemu writes qemu-img's records to stdout,
// one a write, that CDI, Proxmox and Incus read unchanged; 100.00 comes
// last, once the copy is done, then a newline.
func TestProgressQemu(t *testing.T) {
	out, stderr := progressCopy(t, "--progress", "qemu")
	all := out.bytes()
	for i, w := range out.all[:len(out.all)-1] {
		if !qemuRecord.Match(w) {
			t.Fatalf("write %d is %q, not one qemu-img record", i, w)
		}
	}
	if last := out.all[len(out.all)-1]; string(last) != "\n" || !bytes.HasSuffix(all, []byte("    (100.00/100%)\r\n")) {
		t.Fatalf("output ends %q, want the 100.00 record and a newline", all[max(0, len(all)-40):])
	}
	rising(t, "CDI", cdiValues(all), false)
	rising(t, "Proxmox", proxmoxValues(all), true)
	rising(t, "Incus", incusValues(out.all), true)
	if !strings.Contains(stderr.String(), "ringcp: copied") {
		t.Errorf("stderr lacks the summary: %q", stderr.String())
	}
}

// TestProgressPercent: --progress percent writes nbdcopy's N/100 lines,
// and the real nbdcopy --progress=FD writes the same form.
func TestProgressPercent(t *testing.T) {
	line := regexp.MustCompile(`^(\d{1,3})/100$`)
	check := func(who string, out []byte) {
		t.Helper()
		var vs []float64
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: line %q is not N/100:\n%s", who, l, out)
			}
			v, _ := strconv.ParseFloat(m[1], 64)
			vs = append(vs, v)
		}
		rising(t, who, vs, true)
	}
	_, stderr := progressCopy(t, "--progress", "percent", "--json")
	check("ringcp", []byte(strings.Join(regexp.MustCompile(`(?m)^\d+/100$`).FindAllString(stderr.String(), -1), "\n")+"\n"))
	if strings.Count(stderr.String(), "/100\n") != len(regexp.MustCompile(`(?m)^\d+/100$`).FindAllString(stderr.String(), -1)) {
		t.Fatalf("stray output among the percent lines:\n%s", stderr.String())
	}
	if _, err := exec.LookPath("nbdcopy"); err == nil {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		randomFile(t, src, 64<<20, 4)
		f, err := os.Create(filepath.Join(dir, "progress"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("nbdcopy", "--progress=3", src, filepath.Join(dir, "dst"))
		cmd.ExtraFiles = []*os.File{f}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nbdcopy: %v %s", err, out)
		}
		f.Close()
		b, _ := os.ReadFile(f.Name())
		check("nbdcopy", b)
	}
}

// TestProgressJSON: one copier.Status object a line on stderr, the
// documented fields, bytes_done only growing, 100% and "done" only on the
// last line; the --json report stays alone on stdout.
func TestProgressJSON(t *testing.T) {
	out, stderr := progressCopy(t, "--progress", "json", "--json")
	var report map[string]any
	if err := json.Unmarshal(out.bytes(), &report); err != nil || report["outcome"] != "complete" {
		t.Fatalf("stdout is not the one report (%v):\n%s", err, out.bytes())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	var statuses []copier.Status
	for _, l := range lines {
		var raw map[string]any
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		for _, k := range []string{"phase", "bytes_done", "bytes_total", "percent", "bytes_data", "bytes_zeroed",
			"bytes_holes", "bytes_read", "seconds", "bytes_per_second", "eta_seconds"} {
			if _, ok := raw[k]; !ok {
				t.Fatalf("line %q lacks %q", l, k)
			}
		}
		var s copier.Status
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, s)
	}
	if len(statuses) < 3 {
		t.Fatalf("%d lines: want several", len(statuses))
	}
	var prev int64
	for i, s := range statuses {
		last := i == len(statuses)-1
		if s.BytesDone < prev || (s.Percent == 100) != last || (s.Phase == copier.PhaseDone) != last {
			t.Fatalf("line %d of %d: %+v (previous %d)", i, len(statuses), s, prev)
		}
		prev = s.BytesDone
	}
	if !strings.Contains(lines[len(lines)-1], `"phase":"done"`) || !strings.Contains(lines[len(lines)-1], `"percent":100`) {
		t.Fatalf("last line %s", lines[len(lines)-1])
	}
}

// TestHumanLine names its phase and what the copy waits for.
func TestHumanLine(t *testing.T) {
	cases := map[copier.Status]string{
		{Phase: copier.PhaseCopy, BytesDone: 1536 << 20, BytesTotal: 4 << 30, Percent: 37.5, BytesPerSecond: 512.3e6, ETASeconds: 5}: "copying   1.50 GiB / 4.00 GiB   37%  512.3 MB/s  ETA 0:05",
		{Phase: copier.PhaseSync, BytesDone: 4 << 30, BytesTotal: 4 << 30, Percent: 99.99}:                                           "syncing   4.00 GiB / 4.00 GiB   99%  waiting for DST's fdatasync",
		{Phase: copier.PhaseMap, BytesTotal: 4 << 30}:                                                                                "mapping   0 B / 4.00 GiB    0%  flushing SRC before mapping its holes",
		{Phase: copier.PhaseCopy, BytesTotal: 4 << 30, ETASeconds: -1}:                                                               "copying   0 B / 4.00 GiB    0%  0.0 MB/s  ETA -",
		{Phase: copier.PhaseCopy, BytesTotal: 4 << 40, ETASeconds: 3725.2, BytesPerSecond: 1e9}:                                      "copying   0 B / 4.00 TiB    0%  1000.0 MB/s  ETA 1:02:06",
		{Phase: copier.PhaseCopy, BytesDone: 32 << 20, BytesTotal: -1, BytesIn: 3 << 20, ETASeconds: -1, BytesPerSecond: 9.9e6}:      "copying   32.0 MiB / ?  (3.00 MiB read)  9.9 MB/s  ETA -",
	}
	for s, want := range cases {
		if got := humanLine(s); got != want {
			t.Errorf("humanLine(%+v)\n got %q\nwant %q", s, got, want)
		}
	}
}

// TestProgressQemuWithJSON: with --json, stdout holds the report alone and
// the qemu records go to stderr.
func TestProgressQemuWithJSON(t *testing.T) {
	out, stderr := progressCopy(t, "--progress", "qemu", "--json")
	var report map[string]any
	if err := json.Unmarshal(out.bytes(), &report); err != nil {
		t.Fatalf("stdout is not the one report: %v\n%q", err, out.bytes())
	}
	rising(t, "CDI", cdiValues(stderr.Bytes()), false)
}
