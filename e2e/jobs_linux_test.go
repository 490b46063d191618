package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// ringcp --jobs: the list, the refusals across jobs (exit 2, nothing
// written, each refused job named), a failing job among good ones (exit
// 1), signals (128+signal), the summary and --json.

// writeList writes the lines as a --jobs list in dir.
func writeList(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "jobs.list")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// quoteWord quotes a path for a --jobs line: in single quotes, as a
// shell would read it, whatever it holds (an NBD URI's ? and &).
func quoteWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestJobsCLI: a list with quoted names, a comment, a range and awkward
// sizes, each engine: every DST byte for byte, one line per job and a
// total, exit 0.
func TestJobsCLI(t *testing.T) {
	uringtest.NeedOn(t)
	for _, engine := range []string{"uring", "pool"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			sizes := []int{0, 511, 4097, 1<<20 + 3, 9<<20 + 5}
			var lines []string
			var data [][]byte
			for i, n := range sizes {
				src := filepath.Join(dir, fmt.Sprintf("disk %d.img", i))
				data = append(data, randomFile(t, src, n, uint64(i)))
				lines = append(lines, fmt.Sprintf("'%s' \"%s\"  # disk %d", src, filepath.Join(dir, fmt.Sprintf("copy %d", i)), i))
			}
			lines = append(lines, "", fmt.Sprintf(`%s %s --src-offset 4k --length 100001`, strings.ReplaceAll(filepath.Join(dir, "disk 4.img"), " ", `\ `), filepath.Join(dir, "part")))
			r := cli(t, "--engine", engine, "--jobs", writeList(t, dir, lines...))
			r.want(t, exitOK, "ringcp: total: 6 jobs, 6 complete: ")
			for i := range sizes {
				checkPrefix(t, filepath.Join(dir, fmt.Sprintf("copy %d", i)), data[i], int64(len(data[i])))
				r.want(t, exitOK, fmt.Sprintf("ringcp: job %d (line %d) '%s' -> '%s': copied ", i+1, i+1,
					filepath.Join(dir, fmt.Sprintf("disk %d.img", i)), filepath.Join(dir, fmt.Sprintf("copy %d", i))))
			}
			checkPrefix(t, filepath.Join(dir, "part"), data[4][4096:4096+100001], 100001)
			if n := strings.Count(r.stderr, "\n"); n != 7 {
				t.Errorf("%d lines on stderr, want one per job and the total:\n%s", n, r.stderr)
			}
		})
	}
}

// TestJobsStdin: --jobs - reads the list from stdin (the built binary).
func TestJobsStdin(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomFile(t, src, 3<<20+1, 21)
	cmd := exec.Command(binary(t), "--jobs", "-")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("# from a pipe\n%s %s\n", src, dst))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkPrefix(t, dst, data, int64(len(data)))
}

// TestJobsBadList: a list that does not parse is refused before
// anything is read or written: exit 2, the line named.
func TestJobsBadList(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 1<<20, 22)
	good := filepath.Join(dir, "dst")
	list := writeList(t, dir, src+" "+good, "", src+" 'unclosed")
	cli(t, "--jobs", list).want(t, exitRefused, "ringcp: --jobs "+list+" line 3: a ' quote is not closed")
	mustNotExist(t, good)
	cli(t, "--jobs", filepath.Join(dir, "missing")).want(t, exitRefused, "ringcp: --jobs: open "+filepath.Join(dir, "missing")+": no such file")
	// A list that parses, for what copier refuses (after reading it).
	parses := writeList(t, t.TempDir(), src+" "+good)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--jobs", list, src, good}, "SRC and DST go in the list"},
		{[]string{"--jobs", list, "--length", "1M"}, "--length goes on a job's line with --jobs"},
		{[]string{"--parallel", "2", src, good}, "--parallel is for --jobs"},
		{[]string{"--jobs", parses, "--parallel", "-1"}, "--parallel -1: must be 0"},
		{[]string{"--jobs", ""}, "--jobs needs a FILE"},
	} {
		cli(t, c.args...).want(t, exitRefused, c.want)
	}
	mustNotExist(t, good)
}

// TestJobsRefusedAcrossJobs: the same DST twice, a DST that is another
// job's SRC, and a loop device over another job's SRC: exit 2, every
// refused job named with its line, nothing written.
func TestJobsRefusedAcrossJobs(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	randomFile(t, a, 4<<20, 23)
	randomFile(t, b, 1<<20, 24)
	randomFile(t, c, 4<<20, 25)
	dev := blocktest.Loop(t, c, "--offset", "2097152")
	newDst, out := filepath.Join(dir, "new"), filepath.Join(dir, "out")
	list := writeList(t, dir,
		"# five jobs, three refused",
		a+" "+newDst,
		b+" "+newDst,
		b+" "+a,
		c+" "+out,
		b+" "+dev)
	refused(t, []string{"--jobs", list}, []string{a, b, c},
		"ringcp: job 2 (line 3): "+newDst+": is also job 1's DST",
		"ringcp: job 3 (line 4): "+a+": is job 1's SRC",
		"ringcp: job 5 (line 6): "+dev+": overlaps job 4's SRC on "+c,
		"ringcp: refused 3 of 5 jobs; nothing was written")
	mustNotExist(t, newDst)
	mustNotExist(t, out)
	r := cli(t, "--jobs", list)
	if strings.Contains(r.stderr, "job 1 (") || strings.Contains(r.stderr, "job 4 (") {
		t.Errorf("jobs 1 and 4 are not refused, yet named:\n%s", r.stderr)
	}
}

// TestJobsENOSPC: the middle job of three fills a real 32 MiB ext4
// (--force: past the room check); it fails alone with ENOSPC naming the
// write, its new DST discarded; the others complete; exit 1. --json
// reports the same, with the error and outcome of each job.
func TestJobsENOSPC(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, engine := range []string{"uring", "pool"} {
		t.Run(engine, func(t *testing.T) {
			mnt, free := smallExt4(t, "-O", "^extent,^64bit")
			dir := t.TempDir()
			var data [][]byte
			var lines []string
			for i, n := range []int{6<<20 + 1, int(free + 4<<20), 6<<20 + 3} {
				src, dst := filepath.Join(dir, fmt.Sprint("src", i)), filepath.Join(dir, fmt.Sprint("dst", i))
				if i == 1 {
					dst = filepath.Join(mnt, "dst")
				}
				data = append(data, randomFile(t, src, n, uint64(30+i)))
				lines = append(lines, src+" "+dst)
			}
			list := writeList(t, dir, lines...)
			r := cli(t, "--engine", engine, "--force", "-q", "4", "--jobs", list)
			full := filepath.Join(mnt, "dst")
			r.want(t, exitFailed, "ringcp: job 2 (line 2) "+filepath.Join(dir, "src1")+" -> "+full+": failed: write "+full+" at offset ",
				"no space left on device (ENOSPC)", "ringcp: job 2: DST "+full+" discarded",
				"ringcp: total: 3 jobs, 2 complete, 1 failed: ")
			mustNotExist(t, full)
			for _, i := range []int{0, 2} {
				checkPrefix(t, filepath.Join(dir, fmt.Sprint("dst", i)), data[i], int64(len(data[i])))
				os.Remove(filepath.Join(dir, fmt.Sprint("dst", i)))
			}
			r = cli(t, "--engine", engine, "--force", "-q", "4", "--json", "--jobs", list)
			var got jsonJobs
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitFailed {
				t.Fatalf("exit %d, stdout not a batch JSON object: %v\n%s", r.code, err, r.stdout)
			}
			tot := got.Total
			if tot.Jobs != 3 || tot.Complete != 2 || tot.Failed != 1 || tot.Synced || tot.Bytes < int64(len(data[0])+len(data[2])) || tot.QueueDepth != 4 {
				t.Errorf("total %+v", tot)
			}
			for i, j := range got.Jobs {
				failed := i == 1
				if j.Job != i+1 || j.Line != i+1 || (j.Outcome == "failed") != failed || (j.Error != nil) != failed || !(j.Synced || failed) {
					t.Errorf("job %d: %+v", i+1, j)
				}
			}
			if j := got.Jobs[1]; !strings.Contains(j.message(), "no space left on device (ENOSPC)") || j.DstState != "discarded" {
				t.Errorf("failed job: error %q, dst_state %q", j.Error, j.DstState)
			}
			if strings.Contains(r.stderr, "job 1 ") || !strings.Contains(r.stderr, "job 2 (line 2)") {
				t.Errorf("--json: stderr must name the failed job only:\n%s", r.stderr)
			}
		})
	}
}

// jobOutcome is what job n's line says after "job N (line L) SRC -> DST: ".
func jobOutcome(t *testing.T, stderr string, n int) string {
	t.Helper()
	m := regexp.MustCompile(fmt.Sprintf(`ringcp: job %d \(line \d+\) \S+ -> \S+: ([^\n]*)`, n)).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no line for job %d:\n%s", n, stderr)
	}
	return m[1]
}

// TestJobsSignal: SIGINT while the first of three jobs runs (--parallel
// 1): it stops and its new DST is discarded, the others never start and
// their DSTs never appear; exit 130. SIGTERM once both jobs of a batch
// have written: each reports what its DST holds, an existing one its
// true prefix; exit 143.
func TestJobsSignal(t *testing.T) {
	dir := t.TempDir()
	slow, small := slowSrc(t), filepath.Join(dir, "small")
	randomFile(t, small, 1<<20, 40)
	dsts := []string{filepath.Join(dir, "d1"), filepath.Join(dir, "d2"), filepath.Join(dir, "d3")}
	list := writeList(t, dir, slow+" "+dsts[0], small+" "+dsts[1], small+" "+dsts[2])
	s := startSlow(t, "--parallel", "1", "--jobs", list)
	s.signal(t, syscall.SIGINT)
	r := s.wait(t)
	r.want(t, 130, "ringcp: job 1: DST "+dsts[0]+" discarded", "ringcp: total: 3 jobs, 1 interrupted, 2 not started: ")
	if got := jobOutcome(t, r.stderr, 1); !strings.HasPrefix(got, "interrupted by SIGINT: stopped submitting and waited for the I/O in flight; ") {
		t.Errorf("job 1: %q", got)
	}
	for i := 2; i <= 3; i++ {
		if got := jobOutcome(t, r.stderr, i); got != "not started (interrupted by SIGINT); DST untouched" {
			t.Errorf("job %d: %q", i, got)
		}
	}
	for _, d := range dsts {
		mustNotExist(t, d)
	}

	randomFile(t, dsts[1], 3<<20, 41)
	mid := filepath.Join(dir, "mid")
	randomFile(t, mid, 64<<20, 42)
	list = writeList(t, dir, slow+" "+dsts[0], mid+" "+dsts[1])
	s = startSlowDepth(t, "", 2, "--jobs", list)   // two buffers: both jobs run
	s.waitFor(t, regexp.MustCompile(`  2: [1-9]`)) // job 2 has written some too
	s.signal(t, syscall.SIGTERM)
	r = s.wait(t)
	r.want(t, 143, "ringcp: job 1: DST "+dsts[0]+" discarded", "ringcp: job 2: DST "+dsts[1]+" kept: it holds the first ",
		"ringcp: total: 2 jobs, 2 interrupted: ")
	mustNotExist(t, dsts[0])
	m := regexp.MustCompile(`job 2: DST \S+ kept: it holds the first (\d+) bytes`).FindStringSubmatch(r.stderr)
	var kept int64
	if m != nil {
		fmt.Sscan(m[1], &kept)
	}
	if kept == 0 {
		t.Fatalf("job 2 kept nothing:\n%s", r.stderr)
	}
	checkPrefix(t, dsts[1], readRange(t, mid, 0, kept), kept)
}

// TestJobsHelp: --help shows the --jobs usage and flags.
func TestJobsHelp(t *testing.T) {
	r := cli(t, "--help")
	for _, want := range []string{"ringcp [flags] --jobs FILE", "--jobs FILE", "--parallel N"} {
		if !bytes.Contains([]byte(r.stdout), []byte(want)) {
			t.Errorf("--help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestJobsEIO: a job whose SRC fails with EIO (a FUSE fault filesystem,
// where auto picks the pool) runs beside a job on local files (io_uring):
// it fails alone, naming the read, its new DST discarded; the other
// completes; exit 1.
func TestJobsEIO(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultfs mounts with mount(2) here: needs root")
	}
	uringtest.NeedOn(t)
	back, dir := t.TempDir(), t.TempDir()
	randomFile(t, filepath.Join(back, "src"), 1<<20, 50)
	fs := faultfs.Mount(t, back, faultfs.Fault{Op: faultfs.OpRead, Offset: faultAt, Errno: syscall.EIO, Name: "src"})
	good, goodDst := filepath.Join(dir, "good"), filepath.Join(dir, "good.copy")
	data := randomFile(t, good, 3<<20+7, 51)
	list := writeList(t, dir, fs.Path("src")+" "+fs.Path("dst"), good+" "+goodDst)
	r := cli(t, "-b", "64k", "-q", "4", "--jobs", list)
	r.want(t, exitFailed, "ringcp: job 1 (line 1) "+fs.Path("src")+" -> "+fs.Path("dst")+": failed: read "+fs.Path("src")+" at offset ",
		"input/output error (EIO)", "ringcp: job 1: DST "+fs.Path("dst")+" discarded", "engine io_uring", "ringcp: total: 2 jobs, 1 complete, 1 failed: ")
	if got := jobOutcome(t, r.stderr, 2); !strings.HasPrefix(got, "copied ") {
		t.Errorf("job 2: %q", got)
	}
	checkPrefix(t, goodDst, data, int64(len(data)))
	mustNotExist(t, filepath.Join(back, "dst"))
}

// TestJobsSourceShrinks: another process truncates job 1's SRC while the
// batch runs (the built binary); job 1 fails naming the read at or past
// the new end, its DST discarded; job 2 completes; exit 1.
func TestJobsSourceShrinks(t *testing.T) {
	const cut = 1 << 20
	dir := t.TempDir()
	slow, small := slowSrc(t), filepath.Join(dir, "small")
	data := randomFile(t, small, 2<<20+3, 52)
	d1, d2 := filepath.Join(dir, "d1"), filepath.Join(dir, "d2")
	s := startSlow(t, "--jobs", writeList(t, dir, slow+" "+d1, small+" "+d2))
	if out, err := exec.Command("truncate", "-s", fmt.Sprint(cut), slow).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v\n%s", err, out)
	}
	r := s.wait(t)
	r.want(t, exitFailed, "source ended early", "ringcp: job 1: DST "+d1+" discarded", "ringcp: total: 2 jobs, 1 complete, 1 failed: ")
	op, path, off := jobFailedAt(t, r.stderr)
	if op != "read" || path != slow || off < cut {
		t.Errorf("error: %s %s at offset %d; want a read of %s at or past %d", op, path, off, slow, cut)
	}
	mustNotExist(t, d1)
	checkPrefix(t, d2, data, int64(len(data)))
}

// jobFailedAt returns the op, path and offset of a job's "failed: OP
// PATH at offset N: " on stderr.
func jobFailedAt(t *testing.T, stderr string) (op, path string, off int64) {
	t.Helper()
	m := regexp.MustCompile(`: failed: (read|write|fallocate) (\S+) at offset (\d+): `).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"failed: OP PATH at offset N: \" on stderr:\n%s", stderr)
	}
	fmt.Sscan(m[3], &off)
	return m[1], m[2], off
}

// TestJobsTrust: --verify and --checksum with --jobs, each engine: every
// job is read back and verified, and carries SRC's checksum. A batch
// job's read-back takes its buffers from the shared budget (it has none
// of its own: this crashed once).
func TestJobsTrust(t *testing.T) {
	uringtest.NeedOn(t)
	for _, engine := range []string{"uring", "pool"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			sizes := []int{4097, 9<<20 + 5, 5 << 20}
			var lines []string
			var data [][]byte
			for i, n := range sizes {
				src := filepath.Join(dir, fmt.Sprint("src", i))
				data = append(data, randomFile(t, src, n, uint64(70+i)))
				lines = append(lines, src+" "+filepath.Join(dir, fmt.Sprint("dst", i)))
			}
			r := cli(t, "--engine", engine, "--verify", "--checksum", "--json", "--jobs", writeList(t, dir, lines...))
			r.want(t, exitOK)
			var rep struct {
				Jobs []struct {
					Verify   *jsonVerify `json:"verify"`
					Checksum *struct {
						Checksum string `json:"checksum"`
					} `json:"checksum"`
				} `json:"jobs"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Jobs) != len(sizes) {
				t.Fatalf("--json: %v\n%s", err, r.stdout)
			}
			for i, j := range rep.Jobs {
				sameFile(t, fmt.Sprint("DST of job ", i+1), filepath.Join(dir, fmt.Sprint("dst", i)), data[i])
				if j.Verify == nil || j.Verify.Result != "ok" || j.Verify.Bytes != int64(sizes[i]) {
					t.Errorf("job %d: verify %+v, want ok over %d bytes", i+1, j.Verify, sizes[i])
				}
				if j.Checksum == nil || len(j.Checksum.Checksum) != 64 {
					t.Errorf("job %d: checksum %+v", i+1, j.Checksum)
				}
			}
		})
	}
}

// TestJobsProgressFd: the batch's line goes where a single copy's would,
// to --progress-fd, at --progress-interval: descriptor 3 gets the line
// (several redraws of a capped batch), stderr only the job lines.
func TestJobsProgressFd(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 2 {
		src := filepath.Join(dir, fmt.Sprint("src", i))
		randomFile(t, src, 2<<20, uint64(80+i))
		lines = append(lines, src+" "+filepath.Join(dir, fmt.Sprint("dst", i)))
	}
	f, err := os.Create(filepath.Join(dir, "progress"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "--progress", "always", "--progress-fd", "3", "--progress-interval", "50ms",
		"--max-rate", "8M", "--jobs", writeList(t, dir, lines...))
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.CombinedOutput()
	f.Close()
	if err != nil || strings.Contains(string(out), "\r") {
		t.Fatalf("%v: stderr %q should hold no progress line", err, out)
	}
	b, _ := os.ReadFile(f.Name())
	if n := strings.Count(string(b), "\r\x1b[K"); n < 4 || !strings.Contains(string(b), " / 4.00 MiB") {
		t.Fatalf("descriptor 3 got %d redraws: %q", n, b)
	}
}
