package copier

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTryDirectBlocksOnFIFOSwap: Prepare opens each end by name once more,
// after the checks, to learn whether O_DIRECT is accepted (tryDirect), and
// that open has no O_NONBLOCK. A SRC (or DST) swapped for a FIFO after the
// checks looked at it makes that open wait for a writer forever: Prepare
// hangs, although every other open in Prepare and Run is made so that it
// cannot block (issue 10 §3). The steps are run here as Prepare runs them,
// with the swap placed between the inspection and chooseDirect.
func TestTryDirectBlocksOnFIFOSwap(t *testing.T) {
	for _, side := range []string{"src", "dst"} {
		t.Run(side, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			for _, f := range []string{src, dst} {
				if err := os.WriteFile(f, make([]byte, 1<<20), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := &Plan{opts: Options{Src: src, Dst: dst}}
			if err := p.opts.normalize(); err != nil {
				t.Fatal(err)
			}
			var err error
			if p.src, err = inspectSource(src, roleSrc); err != nil {
				t.Fatal(err)
			}
			if p.dst, err = inspectDest(dst); err != nil {
				t.Fatal(err)
			}
			swapped := map[string]string{"src": src, "dst": dst}[side]
			if err := os.Remove(swapped); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(swapped, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- p.chooseDirect() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// Let the blocked open go: a writer appears.
				if w, err := os.OpenFile(swapped, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				<-done
				t.Fatalf("chooseDirect waited on the FIFO now at %s: tryDirect's open can block", swapped)
			}
		})
	}
}
