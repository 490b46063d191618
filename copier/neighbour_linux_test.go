package copier_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
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
			killFio(fg)
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
			// the copy grew from a MiB and held less than every slot
			// most of the time. Not "never every slot": on a loaded
			// machine (CI runs packages side by side) fio may miss a
			// 25 ms tick, and a copy alone keeps every slot.
			if every := int64(p.QueueDepth * p.BlockSize); n.MedianBytes >= every || n.MinBytes > 1<<20 || n.BestRate <= 0 {
				t.Errorf("window from %d (median %d) to %d bytes in flight, best %.0f B/s: want it from a MiB up, mostly under every slot (%d x %d)",
					n.MinBytes, n.MedianBytes, n.MaxBytes, n.BestRate, p.QueueDepth, p.BlockSize)
			}
		})
	}
}

// TestNeighbourAlone: a default copy between two loop devices that
// nothing else uses: the watcher must not take the copy's own requests
// for others' (it counted them as blocks, or as the disk's largest
// request, while the disk counts the bios sent, of a MiB at most), so
// the window keeps every slot the whole copy, as before the good
// neighbour. Both engines. The loop devices' files are on a tmpfs of
// the test's own: over files on the machine's disk, the watcher also
// (rightly) sees whatever else uses that disk, such as the tests of
// other packages that go test runs beside this one.
func TestNeighbourAlone(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	const size = 512 << 20 // several of the watcher's ticks
	dir := privateTmpfs(t, 2*size+64<<20)
	srcFile := filepath.Join(dir, "src")
	writeRandomFile(t, srcFile, size)
	src := blocktest.Loop(t, srcFile, "--read-only")
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dstFile := filepath.Join(dir, "dst-"+string(eng))
			if err := os.WriteFile(dstFile, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(dstFile, size); err != nil {
				t.Fatal(err)
			}
			dst := blocktest.Loop(t, dstFile)
			defer os.Remove(dstFile)
			p, err := copier.Prepare(copier.Options{Src: src, Dst: dst, Engine: eng})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			samePrefix(t, srcFile, dst, size)
			wantAlone(t, p, rep)
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
	cmd := fioCommand(append(args, "--bs=4k", "--iodepth=4", "--time_based", "--runtime=120")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killFio(cmd); cmd.Wait() })
	return cmd
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// samePrefix fails unless the first n bytes of dev are src's, all of it.
// wantAlone: a copy alone on its disks saw no others and kept every
// slot in flight.
func wantAlone(t *testing.T, p *copier.Plan, rep copier.Report) {
	t.Helper()
	n := rep.Neighbour
	if n == nil {
		t.Fatal("no queue depth given, and no good neighbour in the report")
	}
	t.Logf("%s in %.1f s: %s", p.Backend, rep.Seconds, n)
	if every := int64(p.QueueDepth * p.BlockSize); n.OthersSeconds > 0 || n.MinBytes != every {
		t.Errorf("alone: others seen %.2f s, window down to %d bytes: want none, and every slot (%d)", n.OthersSeconds, n.MinBytes, every)
	}
}

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

// privateTmpfs mounts a tmpfs of size bytes for this test alone and
// unmounts it when the test ends (after the loop devices over its files
// are detached: cleanups run last registered first).
func privateTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	blocktest.Run(t, "mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "ringcp-test", dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// writeRandomFile writes size pseudo-random bytes to path (tmpfs takes no
// O_DIRECT, so not by fio).
func writeRandomFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyN(f, rand.NewChaCha8([32]byte{27}), size); err != nil {
		t.Fatal(err)
	}
}
