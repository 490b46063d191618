package copier

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestProbeOpensOnlySrc: the watcher's probe reads open SRC again by its
// path, after the copy opened it. A FIFO put under that path meanwhile
// (by whoever may rename in SRC's folder) made the open wait for a
// writer: the copy hung before moving a byte, deaf to SIGTERM (Go
// restarts the open). And any other file put there was read in SRC's
// place. What the path names now must be SRC, or there are no probes.
func TestProbeOpensOnlySrc(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, swap := range []string{"fifo", "another file"} {
		t.Run(swap, func(t *testing.T) {
			p, err := Prepare(Options{Src: src, Dst: dst})
			if err != nil {
				t.Fatal(err)
			}
			if !p.src.direct {
				t.Skip("SRC takes no O_DIRECT here: no probes")
			}
			moved := src + ".moved"
			if err := os.Rename(src, moved); err != nil {
				t.Fatal(err)
			}
			defer os.Rename(moved, src)
			if swap == "fifo" {
				if err := syscall.Mkfifo(src, 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Link(other, src); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(src)
			y := &yielder{}
			done := make(chan struct{})
			go func() { y.openProbe(p); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// Let the open go: a writer for the FIFO.
				if w, err := os.OpenFile(src, os.O_WRONLY, 0); err == nil {
					<-done
					w.Close()
				}
				y.closeProbe()
				t.Fatalf("a FIFO under SRC's path: the probe's open still waits after 5 s")
			}
			defer y.closeProbe()
			if y.probe != nil {
				t.Errorf("SRC's path names %s now: the probe opened it, want no probes", swap)
			}
		})
	}
}
