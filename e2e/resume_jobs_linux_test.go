package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// --jobs --resume: each job keeps a state of its own, in the folder
// --state names (named after its DST) or in the file its line names, so
// a batch with block devices can be resumed, and no two jobs write one
// state file.

// TestJobsResumeAfterKill: a batch of a new file and a loop device,
// killed with SIGKILL once both states record progress, is finished by
// the same command: each job resumes where its state says, and both DSTs
// are SRC. Both engines.
func TestJobsResumeAfterKill(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			dir, states := t.TempDir(), t.TempDir()
			src := filepath.Join(dir, "src.img")
			data := randomFile(t, src, resumeSize, 52)
			file := filepath.Join(dir, "out.img")
			dev, _ := blocktest.Device(t, resumeSize+1<<20, "--direct-io=on")
			list := filepath.Join(dir, "list")
			if err := os.WriteFile(list, []byte(src+" "+file+"\n"+src+" "+dev+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fileState, devState := copier.StateIn(states, file), copier.StateIn(states, dev)
			// Two buffers: both jobs run at once.
			r := startResumableQ(t, fileState, 2, "--engine", eng, "--state", states, "--jobs", list)
			waitRecorded(t, r, fileState, 8<<20)
			waitRecorded(t, r, devState, 8<<20)
			r.kill(t)

			res := cli(t, "--resume", "--engine", eng, "--state", states, "--json", "--progress", "none", "--jobs", list)
			res.want(t, 0)
			var rep struct{ Jobs []struct{ Resumed int64 } }
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || len(rep.Jobs) != 2 {
				t.Fatalf("--json: %v\n%s", err, res.stdout)
			}
			for i, j := range rep.Jobs {
				if j.Resumed < copier.CellSize {
					t.Errorf("job %d resumed from %d: its state was not used", i+1, j.Resumed)
				}
			}
			sameFile(t, "the file job's DST", file, data)
			sameBytes(t, "the device job's DST", readRange(t, dev, 0, resumeSize), data)
			mustNotExist(t, fileState)
			mustNotExist(t, devState)
			mustNotExist(t, file+".ringcp-partial")
		})
	}
}

// TestJobsResumeStates: a line's --state is that job's state file; two
// jobs naming one are refused; with --jobs, --state names a folder, and a
// line's --state needs --resume.
func TestJobsResumeStates(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	data := randomFile(t, src, 1<<20+7, 53)
	a, b := filepath.Join(dir, "a.img"), filepath.Join(dir, "b.img")
	own := filepath.Join(dir, "a.state")
	list := func(text string) string {
		p := filepath.Join(t.TempDir(), "list")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	shared := list(src + " " + a + " --state " + own + "\n" + src + " " + b + " --state " + dir + "/./a.state\n")
	cli(t, "--resume", "--jobs", shared).want(t, 2, "job 2 (line 2)", "keeps its resume state in", "as job 1 does")
	mustNotExist(t, a)

	cli(t, "--resume", "--state", own, "--jobs", list(src+" "+a+"\n")).want(t, 2, "with --jobs, --state names a folder")
	cli(t, "--jobs", list(src+" "+a+" --state "+own+"\n")).want(t, 2, "line 1: --state is for --resume")

	cli(t, "--resume", "--state", t.TempDir(), "--jobs", list(src+" "+a+" --state "+own+"\n"+src+" "+b+"\n")).want(t, 0)
	sameFile(t, "job 1's DST", a, data)
	sameFile(t, "job 2's DST", b, data)
	mustNotExist(t, own)
}
