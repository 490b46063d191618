package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// statusAnswer is SIGUSR1's answer on stderr: the progress line's words on
// a line of their own.
var statusAnswer = regexp.MustCompile(`ringcp: copying +([0-9.]+) ([KMG]?i?B) / 1\.00 GiB +\d+%  [0-9.]+ MB/s  ETA \S+\n`)

// TestStatusSignal: SIGUSR1 prints one status line and the copy goes on
// (its default action would kill the process), as GNU dd answers it; a
// second one answers again; the copy then ends as usual (here by SIGINT).
func TestStatusSignal(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	s := startSlow(t, src, dst)
	var first []string
	for i := 1; i <= 2; i++ {
		s.signal(t, syscall.SIGUSR1)
		deadline := time.Now().Add(10 * time.Second)
		for len(statusAnswer.FindAllStringSubmatch(s.output(), -1)) < i {
			if time.Now().After(deadline) {
				t.Fatalf("no status line %d after SIGUSR1:\n%q", i, s.output())
			}
			select {
			case <-s.exited:
				t.Fatalf("ringcp exited on SIGUSR1: %v\n%s", s.err, s.output())
			case <-time.After(20 * time.Millisecond):
			}
		}
		m := statusAnswer.FindAllStringSubmatch(s.output(), -1)
		if i == 1 {
			first = m[0]
			time.Sleep(300 * time.Millisecond) // let more be written
		} else if bytesOf(t, m[1]) <= bytesOf(t, first) {
			t.Errorf("the second answer (%s %s) shows no more than the first (%s %s): the copy did not go on", m[1][1], m[1][2], first[1], first[2])
		}
	}
	s.signal(t, syscall.SIGINT)
	interrupted(t, s.wait(t), syscall.SIGINT, "SIGINT")
}

func bytesOf(t *testing.T, m []string) float64 {
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v * map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]
}
