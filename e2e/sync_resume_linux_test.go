package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/schematest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// ringcp sync --resume: a sync stopped part way and run again with
// --resume goes on from the prefix its state file records when the state
// is trusted (a stop by a signal settles DST's marks), reading and
// writing only the rest; after a kill -9, or when DST was written between
// the runs, it starts over, which a sync can afford: it writes only what
// differs, so what the first run wrote is not written again, and a DST
// changed in the prefix ends equal to SRC all the same.

// syncResumeSize is SRC's size: at --max-rate 4M the first run takes
// about eight seconds, and a stop lands in its middle.
const syncResumeSize = 32 << 20

// resumeJSON is what the tests read of the rerun's --json.
type resumeJSON struct {
	Outcome string `json:"outcome"`
	Resumed int64  `json:"resumed"`
	Read    int64  `json:"bytes_read"`
	Bytes   int64  `json:"bytes"`
	Changed *struct {
		BytesReadDst int64 `json:"bytes_read_dst"`
	} `json:"changed"`
}

// stateDone polls the state file until it records at least two of the
// 4 MiB cells a rerun resumes at.
func stateDone(t *testing.T, path string) int64 {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		var st struct{ Done int64 }
		if err == nil && json.Unmarshal(b, &st) == nil && st.Done >= 8<<20 {
			return st.Done
		}
	}
	t.Fatalf("%s recorded no progress in 20s", path)
	return 0
}

func TestSyncResume(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		foreign bool // DST is written in the prefix between the runs
		trusted bool // the rerun goes on from the state's prefix
	}{
		{"sigint", syscall.SIGINT, false, true},
		{"sigint/dst-written", syscall.SIGINT, true, false},
		{"kill-9", syscall.SIGKILL, false, false}, // usually from the start: DST was written after the last barrier
		{"kill-9/dst-written", syscall.SIGKILL, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			b := synctest.Random(40, syncResumeSize)
			synctest.WriteFile(t, src, b)
			synctest.WriteFile(t, dst, synctest.Random(41, syncResumeSize)) // every granule differs
			state := dst + ".ringcp-state"
			p := startMoving(t, []string{binary(t), "sync", "--resume", "--sync-every", "200ms", "-q", "1", "-b", "128k",
				"--direct", "always", "--granule", "4k", "--progress", "always", "--max-rate", "4M", src, dst})
			done := stateDone(t, state)
			p.signal(t, c.sig)
			if r := p.wait(t); r.code == 0 {
				t.Fatalf("a stopped sync exited 0:\n%s", r.stderr)
			}
			if c.foreign {
				f, err := os.OpenFile(dst, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteAt([]byte("written by someone else"), 100)
				f.Close()
			}
			r := cli(t, "sync", "--resume", "-v", "--json", src, dst)
			r.want(t, 0)
			synctest.Same(t, dst, b)
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("the state file is left after the sync completed: %v", err)
			}
			schematest.Output(t).Check(t, []byte(r.stdout))
			var j resumeJSON
			if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Changed == nil {
				t.Fatalf("--json: %v\n%s", err, r.stdout)
			}
			rest := int64(syncResumeSize) - j.Resumed
			switch {
			case c.sig == syscall.SIGKILL && !c.foreign && j.Read != rest:
				// A kill right after a barrier may leave DST's marks as
				// recorded: either way, only what is not trusted is read.
				t.Fatalf("resumed %d, read %d of SRC: want %d\n%s", j.Resumed, j.Read, rest, r.stderr)
			case c.sig == syscall.SIGKILL && !c.foreign:
			case c.trusted && (j.Resumed < done/(4<<20)*(4<<20) || j.Read != rest || j.Changed.BytesReadDst != rest):
				t.Fatalf("resumed %d (the state said %d done), read %d of SRC and %d of DST: want only the %d after it\n%s",
					j.Resumed, done, j.Read, j.Changed.BytesReadDst, rest, r.stderr)
			case !c.trusted && (j.Resumed != 0 || j.Read != syncResumeSize):
				t.Fatalf("resumed %d, read %d: want a sync from the start\n%s", j.Resumed, j.Read, r.stderr)
			case j.Bytes >= syncResumeSize-done/2:
				// What the first run wrote is equal now: not written again.
				t.Fatalf("the rerun wrote %d bytes; the first had made %d durable", j.Bytes, done)
			}
		})
	}
}
