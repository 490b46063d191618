package copier_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestNeighbourBesideFio: a default copy (no queue depth given) onto a
// loop device that fio reads 4 KiB at random from, 4 in flight, all the
// while. The good neighbour's watch counts fio's requests as others'
// before the copy starts, so its window grows from a MiB and never holds
// every slot; the report says so, and the copy is exact. Both engines.
// Behaviour only: how much fio suffers is the bench's (bench/ busy).
func TestNeighbourBesideFio(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	blocktest.NeedTool(t, "fio")
	// About a second and a half at this VM's speed: several samples.
	const size, fgOff, fgSize = 1 << 30, 1<<30 + 4<<20, 64 << 20
	src := filepath.Join(t.TempDir(), "src")
	fioFile(t, src, "1G")
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dev, _ := blocktest.Device(t, fgOff+fgSize, "--direct-io=on")
			fioOn(t, dev, "write", fgOff, fgSize) // the foreground reads data, not holes
			fg := fioOn(t, dev, "randread", fgOff, fgSize)
			time.Sleep(300 * time.Millisecond) // fio reads
			p, err := copier.Prepare(copier.Options{Src: src, Dst: dev, Engine: eng})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := p.Run(context.Background())
			fg.Process.Kill()
			if err != nil {
				t.Fatal(err)
			}
			samePrefix(t, src, dev, size)
			n := rep.Neighbour
			if n == nil {
				t.Fatal("no queue depth given, and no good neighbour in the report")
			}
			t.Logf("%s in %.1f s: %s", p.Backend, rep.Seconds, n)
			if n.Samples < 2 || n.OthersSeconds == 0 {
				t.Errorf("beside fio at QD 4: %d samples, others seen for %.2f s", n.Samples, n.OthersSeconds)
			}
			// fio read before the copy started: the watcher saw it, and
			// the copy never sent every slot; it grew from a MiB.
			if every := int64(p.QueueDepth * p.BlockSize); n.MaxBytes >= every || n.MinBytes > 1<<20 || n.BestRate <= 0 {
				t.Errorf("window from %d to %d bytes in flight, best %.0f B/s: want it from a MiB up, never every slot (%d x %d)",
					n.MinBytes, n.MaxBytes, n.BestRate, p.QueueDepth, p.BlockSize)
			}
		})
	}
}

// TestNeighbourAlone: a default copy between two loop devices that
// nothing else uses: the watcher must not take the copy's own requests
// for others' (it counted them as blocks, or as the disk's largest
// request, while the disk counts the bios sent, of a MiB at most), so
// the window keeps every slot the whole copy, as before the good
// neighbour. Both engines.
func TestNeighbourAlone(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	blocktest.NeedTool(t, "fio")
	const size = 768 << 20 // several of the watcher's ticks
	srcFile := filepath.Join(t.TempDir(), "src")
	fioFile(t, srcFile, "768M")
	src := blocktest.Loop(t, srcFile, "--read-only")
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dst, _ := blocktest.Device(t, size)
			p, err := copier.Prepare(copier.Options{Src: src, Dst: dst, Engine: eng})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			samePrefix(t, srcFile, dst, size)
			n := rep.Neighbour
			if n == nil {
				t.Fatal("no queue depth given, and no good neighbour in the report")
			}
			t.Logf("%s in %.1f s: %s", p.Backend, rep.Seconds, n)
			if every := int64(p.QueueDepth * p.BlockSize); n.OthersSeconds > 0 || n.MinBytes != every {
				t.Errorf("alone: others seen %.2f s, window down to %d bytes: want none, and every slot (%d)", n.OthersSeconds, n.MinBytes, every)
			}
		})
	}
}

// fioOn runs fio on dev over [off, off+size) in 4 KiB (randread, 4 in
// flight, until killed) or 1 MiB (write, to the end) requests, O_DIRECT.
func fioOn(t *testing.T, dev, rw string, off, size int64) *exec.Cmd {
	t.Helper()
	args := []string{"--name=fg", "--filename=" + dev, "--rw=" + rw, "--direct=1", "--ioengine=libaio",
		"--offset=" + itoa(off), "--size=" + itoa(size), "--output=/dev/null"}
	if rw == "write" {
		cmd := exec.Command("fio", append(args, "--bs=1M", "--refill_buffers")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fio: %v\n%s", err, out)
		}
		return cmd
	}
	cmd := exec.Command("fio", append(args, "--bs=4k", "--iodepth=4", "--time_based", "--runtime=120")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// samePrefix fails unless the first n bytes of dev are src's, all of it.
func samePrefix(t *testing.T, src, dev string, n int64) {
	t.Helper()
	fa, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if st, err := fa.Stat(); err != nil || st.Size() != n {
		t.Fatalf("%s: %v, want %d bytes", src, err, n)
	}
	a, b := make([]byte, 4<<20), make([]byte, 4<<20)
	for off := int64(0); off < n; off += int64(len(a)) {
		if _, err := io.ReadFull(fa, a); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(fb, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s and %s differ in the 4 MiB at %d", dev, src, off)
		}
	}
}
