package copier_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resources are what a copy must give back: descriptors, mappings (its
// buffers, its ring's), goroutines (the pool's workers).
type resources struct {
	fds, maps, uringMaps, goroutines int
	mapped                           int64 // bytes in all mappings
}

func measure(t *testing.T) resources {
	t.Helper()
	fds, err := descriptors()
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	r := resources{fds: fds, goroutines: goroutines()}
	for _, line := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		r.maps++
		if strings.Contains(line, "io_uring") {
			r.uringMaps++
		}
		r.mapped += mapSize(line)
	}
	return r
}

// descriptors counts open descriptors but pipes and /dev/null: the FUSE
// server in this process opens splice pipes (and /dev/null to drain them)
// as load grows, and the copier never opens either.
func descriptors() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if !strings.HasPrefix(l, "pipe:") && l != "/dev/null" {
			n++
		}
	}
	return n, err
}

// goroutines counts the goroutines that are not the FUSE server's: it
// starts readers of /dev/fuse as requests come, and they end in their
// own time.
func goroutines() int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if !strings.Contains(g, "github.com/hanwen/go-fuse") {
			n++
		}
	}
	return n
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// mapSize reads "7fc84823d000-7fc84823e000 rw-s ..." as 4096.
func mapSize(line string) int64 {
	span, _, _ := strings.Cut(line, " ")
	lo, hi, _ := strings.Cut(span, "-")
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return int64(b - a)
}

// noLeaks runs f and fails the test if it leaves descriptors, io_uring
// mappings, other mappings or goroutines behind. Go's runtime maps memory
// and starts goroutines of its own now and then, so a growth of maps or
// goroutines is waited out for a while, and f is run again, up to five
// times in all, when mappings grew: a leak (a buffer or a ring not
// unmapped) grows the mapped bytes every time, the runtime does not.
func noLeaks(t *testing.T, f func()) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := measure(t)
		f()
		after := settle(t, before)
		switch {
		case after.fds != before.fds:
			listFds(t)
			t.Fatalf("descriptors: %d before the copy, %d after", before.fds, after.fds)
		case after.uringMaps != before.uringMaps:
			t.Fatalf("io_uring mappings: %d before the copy, %d after", before.uringMaps, after.uringMaps)
		case after.goroutines > before.goroutines:
			t.Logf("%s", stacks())
			t.Fatalf("goroutines: %d before the copy, %d after", before.goroutines, after.goroutines)
		case after.maps <= before.maps && after.mapped <= before.mapped:
			return
		case attempt == 5:
			t.Fatalf("mappings: %d (%d bytes) before the copy, %d (%d bytes) after, five times",
				before.maps, before.mapped, after.maps, after.mapped)
		}
		t.Logf("mappings grew from %d (%d bytes) to %d (%d bytes); again", before.maps, before.mapped, after.maps, after.mapped)
	}
}

// settle measures again until goroutines and descriptors are back to
// before's counts or two seconds passed. Exiting workers take a moment;
// so does the kernel to tear down a closed ring (io_ring_exit_work), and
// only then does it release the files the ring held, so that the FUSE
// server (in this process) closes its descriptors of the backing files.
func settle(t *testing.T, before resources) resources {
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := measure(t)
		if r.goroutines <= before.goroutines && r.fds <= before.fds || time.Now().After(deadline) {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listFds logs every descriptor, to tell which one leaked.
func listFds(t *testing.T) {
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		t.Logf("fd %s -> %s", e.Name(), l)
	}
}
