package copier_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestYieldToRealLoad: a copy with Options.Yield beside a real foreground,
// fio reading 4 KiB at random with 4 in flight from a file on the same
// disk. The controller sees the foreground's requests, cuts the copy's
// depth and rate, and once fio has stopped raises them again; the copy is
// exact. Both engines.
func TestYieldToRealLoad(t *testing.T) {
	uringtest.NeedOn(t)
	blocktest.NeedTool(t, "fio")
	const size = 384 << 20
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			data := randomBytes(size, 9)
			// The cap makes the copy last long enough to watch (3 s at
			// least); the controller cuts below it.
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, Yield: true, MaxRate: 128 << 20}
			writeFile(t, o.Src, data)
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			fio := startFio(t, filepath.Join(dir, "fg"))
			time.AfterFunc(1500*time.Millisecond, func() { fio.Process.Kill() })
			rep, err := p.Run(context.Background())
			fio.Process.Kill()
			if err != nil {
				t.Fatal(err)
			}
			compareFile(t, o.Dst, data)
			y := rep.Yield
			t.Logf("%s in %.1f s: %s", p.Backend, rep.Seconds, y)
			if y == nil || y.OthersMax < 1000 || y.Cuts < 1 || y.LowestDepth >= p.QueueDepth || y.LowestRate <= 0 {
				t.Fatalf("beside fio at QD 4: %+v", y)
			}
			if y.Raises < 1 {
				t.Errorf("fio stopped after 1.5 s, the copy ran %.1f s, and was never raised: %+v", rep.Seconds, y)
			}
		})
	}
}

// startFio runs fio reading 4 KiB at random, 4 in flight, O_DIRECT, from
// a 256 MiB file at path, until killed; it returns once fio reads.
func startFio(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	mk := exec.Command("fio", "--name=mk", "--filename="+path, "--size=256M", "--rw=write", "--bs=1M", "--direct=1", "--output=/dev/null")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	cmd := exec.Command("fio", "--name=fg", "--filename="+path, "--size=256M", "--rw=randread", "--bs=4k", "--iodepth=4",
		"--direct=1", "--ioengine=libaio", "--time_based", "--runtime=60", "--output=/dev/null")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(500 * time.Millisecond) // fio lays out its job, then reads
	if cmd.ProcessState != nil {
		t.Fatal(fmt.Errorf("fio exited early: %v", cmd.ProcessState))
	}
	return cmd
}
