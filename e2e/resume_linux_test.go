package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// A resumable copy (--resume) killed with SIGKILL at random points, on
// both engines, into new and existing files and onto loop devices: the
// same command run again copies only what the state file does not record
// as done, and the result is byte for byte SRC. What a kill loses is at
// most about one --sync-every of work.

// resumeSize is SRC's size: at one 4 KiB O_DIRECT request at a time
// (about 16 MB/s here) the copy takes seconds, so a kill lands anywhere.
const resumeSize = 48 << 20

// resumeEvery is the tests' --sync-every: shorter than the default 2 s so
// that each kill finds several barriers behind it.
const resumeEvery = 500 * time.Millisecond

// sample is one progress line: bytes written by then.
type sample struct {
	at   time.Time
	done int64
}

// resumable is a running ringcp whose progress lines are kept with the
// time they came, and whose state file is watched: the longest time
// between two of its records, beyond --sync-every, is how long a barrier
// and the state's fsyncs took at worst on this (busy) machine.
type resumable struct {
	*proc
	mu      sync.Mutex
	samples []sample
	updates []sample // what the state file recorded, and when
}

// watchState polls the state file while ringcp runs.
func (r *resumable) watchState(path string) {
	var last int64 = -1
	for {
		select {
		case <-r.exited:
			return
		case <-time.After(5 * time.Millisecond):
		}
		b, err := os.ReadFile(path)
		var st struct{ Done int64 }
		if err != nil || json.Unmarshal(b, &st) != nil || st.Done == last {
			continue // the first record counts: the copy starts then
		}
		last = st.Done
		r.mu.Lock()
		r.updates = append(r.updates, sample{time.Now(), st.Done})
		r.mu.Unlock()
	}
}

// progressBytes reads the written figure of a progress line.
var progressBytes = regexp.MustCompile(`\r\x1b\[K[a-z]* +([0-9.]+) ([KMGT]?i?B) / `)

func startResumable(t *testing.T, state string, args ...string) *resumable {
	t.Helper()
	return startResumableWith(t, state, resumeFlags(1, "always"), args...)
}

// startResumableQ is startResumable with depth requests of 4 KiB at a
// time: a batch runs that many jobs at once.
func startResumableQ(t *testing.T, state string, depth int, args ...string) *resumable {
	t.Helper()
	return startResumableWith(t, state, resumeFlags(depth, "always"), args...)
}

// resumeFlags make a resumable copy slow enough for a kill to land
// anywhere: depth requests of 4 KiB, every byte written, --direct direct.
func resumeFlags(depth int, direct string) []string {
	return append([]string{"--resume", "--sync-every", resumeEvery.String(), "--progress", "always"}, slowFlags(depth, direct)...)
}

// startResumableWith starts ringcp with flags, then args.
func startResumableWith(t *testing.T, state string, flags []string, args ...string) *resumable {
	t.Helper()
	r := &resumable{}
	r.proc = start(t, append(append([]string{binary(t)}, flags...), args...), r.sampled)
	go r.watchState(state)
	return r
}

// sampled keeps the figures of the progress lines in a piece of stderr.
func (r *resumable) sampled(chunk []byte, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range progressBytes.FindAllSubmatch(chunk, -1) {
		r.samples = append(r.samples, sample{at, parseShown(string(m[1]), string(m[2]))})
	}
}

// parseShown reads units.Format's "12.3 MiB" back, to its precision.
func parseShown(num, unit string) int64 {
	v, _ := strconv.ParseFloat(num, 64)
	mult := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	return int64(v * mult)
}

// waitFor waits until a progress line shows at least n bytes written.
func (r *resumable) waitFor(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		got := len(r.samples) > 0 && r.samples[len(r.samples)-1].done >= max(n, 1)
		r.mu.Unlock()
		if got {
			return
		}
		select {
		case <-r.exited:
			t.Fatalf("ringcp exited before it had written %d bytes: %v\n%s", n, r.err, r.output())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("not %d bytes written after 60 s:\n%s", n, r.output())
}

// kill sends SIGKILL and waits; it returns the progress samples and the
// longest a barrier cycle took beyond --sync-every.
func (r *resumable) kill(t *testing.T) ([]sample, time.Duration) {
	t.Helper()
	r.signal(t, syscall.SIGKILL)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("ringcp did not die")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var lag time.Duration
	for i := 1; i < len(r.updates); i++ {
		lag = max(lag, r.updates[i].at.Sub(r.updates[i-1].at)-resumeEvery)
	}
	return append([]sample(nil), r.samples...), lag
}

// lostBound is how much written work a kill may lose: what the samples
// show was written in the last --sync-every and twice the time a barrier
// and the state file's fsyncs take (the barrier that would have recorded
// it, and the one before, whose prefix stands; a second on a quiet
// machine, more when lag measured more), plus the 4 MiB a rerun rounds
// the recorded prefix down by.
func lostBound(samples []sample, lag time.Duration) (shown, bound int64) {
	if len(samples) == 0 {
		return 0, copier.CellSize
	}
	window := resumeEvery + max(time.Second, 2*lag)
	last := samples[len(samples)-1]
	before := int64(0)
	for _, s := range samples {
		if s.at.Before(last.at.Add(-window)) {
			before = s.done
		}
	}
	// The last line may be up to a quarter second old when the kill came.
	rate := float64(last.done) / max(last.at.Sub(samples[0].at).Seconds(), 0.25)
	return last.done, last.done - before + int64(rate/4) + copier.CellSize + 1<<20
}

// readState returns what a state file records as done, -1 when there is
// none.
func readState(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Done int64 }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state %s: %v\n%s", path, err, b)
	}
	return st.Done
}

// resumeTarget is where a kill test copies to.
type resumeTarget struct {
	dst, state string
	device     bool            // a block device or an export: written in place, --state given
	export     bool            // an NBD export: the nbd engine, read through a client
	reset      func(trial int) // makes DST what a fresh copy starts from
}

// read returns DST's first n bytes.
func (tg resumeTarget) read(t *testing.T, n int64) []byte {
	if tg.export {
		return exportBytes(t, tg.dst)[:n]
	}
	return readRange(t, tg.dst, 0, n)
}

func fileTarget(t *testing.T) resumeTarget {
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst.img")
	return resumeTarget{dst: dst, state: copier.StatePath(dst), reset: func(trial int) {
		for _, p := range []string{dst, dst + ".ringcp-partial", copier.StatePath(dst)} {
			os.Remove(p)
		}
		if trial%2 == 1 { // every other trial overwrites an existing, longer DST
			randomFile(t, dst, resumeSize+3<<20, uint64(trial)+50)
		}
	}}
}

func deviceTarget(t *testing.T) resumeTarget {
	dev, _ := blocktest.Device(t, resumeSize+1<<20, "--direct-io=on")
	state := filepath.Join(t.TempDir(), "state")
	return resumeTarget{dst: dev, state: state, device: true, reset: func(trial int) {
		os.Remove(state)
		randomFile(t, dev, resumeSize+1<<20, uint64(trial)+60)
	}}
}

// TestResumeAfterKill: 24 kills at random points (random amounts
// written), six per engine and kind
// of DST, each resumed by the same command and compared.
func TestResumeAfterKill(t *testing.T) {
	blocktest.NeedRoot(t) // --direct always on the temp dir and loop devices
	uringtest.NeedOn(t)
	src := filepath.Join(t.TempDir(), "src.img")
	data := randomFile(t, src, resumeSize, 41)
	for _, kind := range []string{"file", "device"} {
		for _, eng := range []string{"uring", "pool"} {
			t.Run(kind+"/"+eng, func(t *testing.T) {
				target := fileTarget
				if kind == "device" {
					target = deviceTarget
				}
				tg := target(t)
				rng := rand.New(rand.NewPCG(uint64(len(kind)), uint64(len(eng))))
				for trial := range 6 {
					t.Run(strconv.Itoa(trial), func(t *testing.T) { killAndResume(t, tg, eng, src, data, trial, rng) })
				}
			})
		}
	}
}

func killAndResume(t *testing.T, tg resumeTarget, eng, src string, data []byte, trial int, rng *rand.Rand) {
	tg.reset(trial)
	args := []string{"--engine", eng}
	if tg.device {
		args = append(args, "--state", tg.state)
	}
	r := startResumable(t, tg.state, append(args, src, tg.dst)...)
	// A random point of the copy, from its first bytes to three quarters.
	r.waitFor(t, rng.Int64N(int64(len(data))*3/4))
	samples, lag := r.kill(t)
	shown, bound := lostBound(samples, lag)
	done := readState(t, tg.state)
	if done < 0 {
		t.Fatalf("no state file at %s after progress was shown", tg.state)
	}
	resumeAt := done / copier.CellSize * copier.CellSize
	t.Logf("killed at %d bytes shown, %d recorded durable (barriers up to %v late); the rerun starts at %d", shown, done, lag, resumeAt)
	if shown-resumeAt > bound {
		t.Errorf("the kill lost %d bytes of work (%d shown, resumed at %d): more than the last %v's %d", shown-resumeAt, shown, resumeAt, resumeEvery, bound)
	}
	if done > int64(len(data)) {
		t.Fatalf("state records %d done of %d", done, len(data))
	}
	switch {
	case tg.export:
		args = []string{"--state", tg.state}
	case trial%2 == 1: // the state is the engine's as much as the other's
		args = []string{"--engine", map[string]string{"uring": "pool", "pool": "uring"}[eng], "--state", tg.state}
	}
	flags := append(args, "--resume", "--json", "--progress", "none")
	if trial%3 == 0 {
		flags = append(flags, "--verify")
	}
	res := cli(t, append(flags, src, tg.dst)...)
	res.want(t, 0)
	var rep struct {
		Bytes, Resumed int64
		DstState       string `json:"dst_state"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, res.stdout)
	}
	if rep.Resumed != resumeAt || rep.Bytes != int64(len(data))-resumeAt || rep.DstState != "complete" {
		t.Errorf("rerun: resumed %d, %d bytes copied, DST %s; want %d and %d, complete", rep.Resumed, rep.Bytes, rep.DstState, resumeAt, int64(len(data))-resumeAt)
	}
	if got := tg.read(t, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatal("DST is not SRC after the resumed copy")
	}
	if !tg.device {
		if fi, err := os.Stat(tg.dst); err != nil || fi.Size() != int64(len(data)) {
			t.Errorf("DST: %v, %v: want %d bytes", fi, err, len(data))
		}
		mustNotExist(t, tg.dst+".ringcp-partial")
	}
	mustNotExist(t, tg.state)
}

// interruptedCopy leaves a resumable copy of src into dst stopped by
// SIGINT once its state records some progress, and returns what it
// records.
func interruptedCopy(t *testing.T, src, dst string, args ...string) int64 {
	t.Helper()
	state := copier.StatePath(dst)
	r := startResumable(t, state, append(args, src, dst)...)
	r.waitFor(t, 1)
	deadline := time.Now().Add(20 * time.Second)
	for readState(t, state) <= copier.CellSize && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	r.signal(t, syscall.SIGINT)
	out := r.wait(t).stderr
	if !bytes.Contains([]byte(out), []byte("is kept for --resume")) {
		t.Fatalf("an interrupted resumable copy does not say DST is kept:\n%s", out)
	}
	return readState(t, state)
}

// TestResumeRefusesChanges: after an interrupted copy, a changed SRC, a
// replaced partial DST, another range, each refuse the rerun (exit 2,
// naming what changed) and leave the partial DST and the state as they
// were; the unchanged rerun then completes.
func TestResumeRefusesChanges(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.img")
	data := randomFile(t, src, resumeSize, 42)
	partial, state := dst+".ringcp-partial", copier.StatePath(dst)
	done := interruptedCopy(t, src, dst)
	t.Logf("interrupted with %d bytes recorded", done)
	keep := snap(t, partial)
	keepState := snap(t, state)

	cli(t, "--resume", "--length", "1M", src, dst).want(t, 2, "records the range 0+50331648")

	moved := filepath.Join(dir, "moved")
	if err := os.Rename(partial, moved); err != nil {
		t.Fatal(err)
	}
	randomFile(t, partial, 1<<20, 3)
	cli(t, "--resume", src, dst).want(t, 2, "is not the DST the resume state records: it is another file now")
	if err := os.Rename(moved, partial); err != nil {
		t.Fatal(err)
	}

	old := snap(t, src)
	later := old.MTime.Add(time.Second)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	cli(t, "--resume", src, dst).want(t, 2, "changed since the copy that the resume state records: it was modified (mtime")
	keep.Same(t)
	keepState.Same(t)

	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("more"))
	f.Close()
	cli(t, "--resume", src, dst).want(t, 2, "its size was 50331648 bytes, it is 50331652 now")
	keep.Same(t)
	if err := os.Truncate(src, resumeSize); err != nil {
		t.Fatal(err)
	}
	cli(t, "--resume", src, dst).want(t, 2, "changed since the copy")

	os.Remove(state)
	cli(t, "--resume", src, dst).want(t, 0) // no state: the copy starts over, over the leftover partial
	sameFile(t, "DST after the resumed copy", dst, data)
	mustNotExist(t, partial)
	mustNotExist(t, state)
}

// TestResumeNeedsStateForDevice: a block device DST gets no state file in
// /dev by default.
func TestResumeNeedsStateForDevice(t *testing.T) {
	dev, _ := blocktest.Device(t, 1<<20, "--direct-io=on")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 1<<20, 5)
	before := snap(t, dev)
	cli(t, "--resume", src, dev).want(t, 2, "needs a state file path (--state)")
	before.Same(t)
	mustNotExist(t, dev+".ringcp-state")
	state := filepath.Join(t.TempDir(), "state")
	cli(t, "--resume", "--state", state, src, dev).want(t, 0)
	mustNotExist(t, state)
}
