package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// A copy waiting on its rate cap ends at once on a stop signal and goes
// on at once when `ringcp rate PID 0` lifts the cap: before, it slept
// until its next request was due (--max-rate 1 then SIGINT: exit 509 s
// later; ringcp rate PID 1 then SIGTERM or rate 0: still asleep after two
// minutes). capWithin is far more than "at once" needs on a shared, slow
// machine.
const capWithin = 5 * time.Second

// capEnds are the ends a capped copy runs between: two files, or a file
// and an NBD export (the nbd backend).
var capEnds = []string{"file", "nbd"}

// capCopy starts a copy of 1 MiB of random data, 4 KiB at a time, with
// args (the cap), on engine eng, to a new file or into an export, and
// returns once it wrote something. It returns SRC's bytes and where DST
// is.
func capCopy(t *testing.T, eng, end string, args ...string) (*proc, []byte, string) {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomFile(t, src, 1<<20, 71)
	flags := []string{"-q", "1", "-b", "4k", "--sparse", "never", "--progress", "always", "--engine", eng}
	if end == "nbd" {
		nbdtest.Need(t, "nbdkit")
		dst = memory(t, nbdtest.Unix, 1<<20)
	}
	argv := append([]string{binary(t)}, append(append(flags, args...), src, dst)...)
	return startMoving(t, argv), data, dst
}

// stopCapped signals s and checks that it ends within capWithin, with
// 128+sig and the interrupted lines.
func stopCapped(t *testing.T, s *proc, sig syscall.Signal) {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // it waits on the cap now
	start := time.Now()
	s.signal(t, sig)
	r := s.wait(t)
	if took := time.Since(start); took > capWithin {
		t.Errorf("%v under the cap: ringcp ended %v later", sig, took)
	}
	interrupted(t, r, sig, signalName(sig))
}

func signalName(sig syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[sig]
}

// capEngines are the engines a capped copy of files runs on; a copy into
// an export runs on the nbd backend.
func capEngines(end string) []string {
	if end == "nbd" {
		return []string{"nbd"}
	}
	return []string{"uring", "pool"}
}

// TestCapSignals: --max-rate 1 (one byte per second: the next 4 KiB
// request due in an hour), then SIGINT, SIGTERM or SIGHUP: exit 128+sig
// within capWithin, saying what was written. Both engines, and into an
// NBD export.
func TestCapSignals(t *testing.T) {
	uringtest.NeedOn(t)
	for _, end := range capEnds {
		for _, eng := range capEngines(end) {
			for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
				t.Run(fmt.Sprintf("%s/%s/%s", end, eng, signalName(sig)), func(t *testing.T) {
					s, _, _ := capCopy(t, eng, end, "--max-rate", "1")
					stopCapped(t, s, sig)
				})
			}
		}
	}
}

// TestRateCommandSignals: a copy with no cap is given one of 1 B/s by
// `ringcp rate PID 1`, then SIGTERM or SIGINT: exit 128+sig within
// capWithin. Both engines, and into an NBD export.
func TestRateCommandSignals(t *testing.T) {
	uringtest.NeedOn(t)
	for _, end := range capEnds {
		for _, eng := range capEngines(end) {
			for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
				t.Run(fmt.Sprintf("%s/%s/%s", end, eng, signalName(sig)), func(t *testing.T) {
					s := slowCapped(t, eng, end)
					stopCapped(t, s, sig)
				})
			}
		}
	}
}

// slowCapped starts a copy that takes about a minute with no cap, and
// caps it at 1 B/s with `ringcp rate PID 1`.
func slowCapped(t *testing.T, eng, end string) *proc {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "dst")
	if end == "nbd" {
		nbdtest.Need(t, "nbdkit")
		dst = memory(t, nbdtest.Unix, slowSrcSize)
	}
	s := startSlow(t, "--engine", eng, slowSrc(t), dst)
	cli(t, "rate", fmt.Sprint(s.pid()), "1").want(t, 0)
	waitUntil(t, func() bool { return strings.Contains(s.output(), "rate cap now 1 B/s (ringcp rate)") })
	return s
}

// TestRateZeroWakes: a copy asleep on --max-rate 1 has its cap lifted by
// `ringcp rate PID 0`: it ends within capWithin, exit 0, DST exact. Both
// engines, and into an NBD export.
func TestRateZeroWakes(t *testing.T) {
	uringtest.NeedOn(t)
	for _, end := range capEnds {
		for _, eng := range capEngines(end) {
			t.Run(end+"/"+eng, func(t *testing.T) {
				s, data, dst := capCopy(t, eng, end, "--max-rate", "1")
				time.Sleep(300 * time.Millisecond)
				start := time.Now()
				cli(t, "rate", fmt.Sprint(s.pid()), "0").want(t, 0)
				r := s.wait(t)
				if took := time.Since(start); took > capWithin {
					t.Errorf("the cap was lifted, yet the copy ended %v later", took)
				}
				r.want(t, 0, "rate cap now none (ringcp rate)")
				if end == "nbd" {
					sameBytes(t, "the export", exportBytes(t, dst), data)
				} else {
					sameFile(t, "DST", dst, data)
				}
			})
		}
	}
}

// TestJobsCapSignal: --jobs under a shared --max-rate 1, then SIGINT:
// every job stops within capWithin, exit 130, each saying what it wrote.
// Both engines.
func TestJobsCapSignal(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range capEngines("file") {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			var lines []string
			for i := range 3 {
				src := filepath.Join(dir, fmt.Sprint("src", i))
				randomFile(t, src, 1<<20, uint64(90+i))
				lines = append(lines, src+" "+filepath.Join(dir, fmt.Sprint("dst", i)))
			}
			list := writeList(t, dir, lines...)
			s := startMoving(t, []string{binary(t), "--jobs", list, "--max-rate", "1", "-b", "4k", "--engine", eng, "--progress", "always"})
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			s.signal(t, syscall.SIGINT)
			r := s.wait(t)
			if took := time.Since(start); took > capWithin {
				t.Errorf("SIGINT under a shared cap: ringcp ended %v later", took)
			}
			r.want(t, 130, "interrupted by SIGINT: stopped submitting and waited for the I/O in flight", "3 interrupted")
		})
	}
}
