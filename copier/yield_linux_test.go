package copier_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
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
// disk: the controller finds the copy's disk, its probe reads SRC, and it
// counts the foreground's requests as others'; the copy is exact. Both
// engines. Whether the foreground suffers here depends on the disk; the
// cuts and raises are proved where it surely does (TestYieldBesideReader
// in the command's tests) and on fake inputs (yield_test.go).
func TestYieldToRealLoad(t *testing.T) {
	uringtest.NeedOn(t)
	blocktest.NeedTool(t, "fio")
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			// 512 MiB of random data (fio writes it fast): at full speed the
			// copy takes about a second, and a foreground beside it waits.
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, Yield: true}
			fioFile(t, o.Src, "512M")
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			fio := startFio(t, filepath.Join(dir, "fg"))
			time.AfterFunc(1500*time.Millisecond, func() { killFio(fio) })
			rep, err := p.Run(context.Background())
			killFio(fio)
			if err != nil {
				t.Fatal(err)
			}
			sameFiles(t, o.Src, o.Dst)
			y := rep.Yield
			t.Logf("%s in %.1f s: %s", p.Backend, rep.Seconds, y)
			if y == nil || y.OthersMax < 1000 || y.ProbeBase <= 0 || y.ProbeMax < y.ProbeBase {
				t.Fatalf("beside fio at QD 4: %+v", y)
			}
		})
	}
}

// fioFile writes size bytes of random data to path with fio.
func fioFile(t *testing.T, path, size string) {
	t.Helper()
	mk := exec.Command("fio", "--name=mk", "--filename="+path, "--size="+size, "--rw=write", "--bs=1M", "--direct=1",
		"--refill_buffers", "--output=/dev/null")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
}

// sameFiles fails unless the two files hold the same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ba, bb := make([]byte, 4<<20), make([]byte, 4<<20)
	for off := int64(0); ; off += int64(len(ba)) {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			t.Fatalf("%s and %s differ in the 4 MiB at %d", a, b, off)
		}
		if ea != nil || eb != nil {
			if (ea == nil) != (eb == nil) {
				t.Fatalf("%s and %s end apart: %v, %v", a, b, ea, eb)
			}
			return
		}
	}
}

// startFio runs fio reading 4 KiB at random, 4 in flight, O_DIRECT, from
// a 256 MiB file at path, until killed; it returns once fio reads.
func startFio(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	fioFile(t, path, "256M")
	cmd := fioCommand("--name=fg", "--filename="+path, "--size=256M", "--rw=randread", "--bs=4k", "--iodepth=4",
		"--direct=1", "--ioengine=libaio", "--time_based", "--runtime=60", "--output=/dev/null")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killFio(cmd); cmd.Wait() })
	time.Sleep(500 * time.Millisecond) // fio lays out its job, then reads
	if cmd.ProcessState != nil {
		t.Fatal(fmt.Errorf("fio exited early: %v", cmd.ProcessState))
	}
	return cmd
}
