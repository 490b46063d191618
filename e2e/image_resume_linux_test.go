package e2e

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// --resume into a new qcow2 image (--dst-format qcow2): the partial image
// is a valid image wherever the copy is stopped (kill -9 or SIGINT), and
// the rerun goes on from the part its state records. Each stop is
// followed by qemu-img check on the partial image; the end by qemu-img
// check, qemu-img compare with SRC, qemu-img convert -O raw and ringcp's
// own reader, byte for byte.

// imageResumeFlags slow the copy down enough for stops to land part-way
// and for several barriers to come before each.
var imageResumeFlags = []string{"--resume", "--sync-every", "100ms", "--progress", "always", "--max-rate", "6M", "-b", "256k"}

// mixedSource writes a disk of size bytes: random data, text that
// compresses, written zeros and holes, in stretches of odd lengths.
func mixedSource(t *testing.T, path string, size int64, seed int64) []byte {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	b := make([]byte, size)
	for off := int64(0); off < size; {
		n := min(size-off, int64(rng.Intn(900<<10)+1))
		switch rng.Intn(4) {
		case 0:
			rng.Read(b[off : off+n])
		case 1:
			for i := range b[off : off+n] {
				b[off+int64(i)] = "a disk image, some text that compresses well\n"[(int(off)+i)%45]
			}
		}
		off += n
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < size; off += 64 << 10 { // holes where zeros
		chunk := b[off:min(size, off+64<<10)]
		if !bytes.Equal(chunk, make([]byte, len(chunk))) || off%(256<<10) == 0 {
			if _, err := f.WriteAt(chunk, off); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

// qemuCheckClean fails unless qemu-img check finds no error and no leak.
func qemuCheckClean(t *testing.T, img string) {
	t.Helper()
	out, err := exec.Command("qemu-img", "check", img).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No errors were found") {
		t.Fatalf("qemu-img check %s: %v\n%s", img, err, out)
	}
}

// stopAt runs the resumable copy and stops it with sig once its state
// records at least n bytes.
func stopAt(t *testing.T, state string, n int64, sig syscall.Signal, args ...string) int64 {
	t.Helper()
	r := startResumableWith(t, state, imageResumeFlags, args...)
	waitRecorded(t, r, state, n)
	r.signal(t, sig)
	<-r.exited
	return readState(t, state)
}

// checkImage holds the finished image against SRC's bytes: qemu-img
// check and compare, qemu-img convert -O raw, and ringcp reading it.
func checkImage(t *testing.T, img, src string, want []byte, backing bool) {
	t.Helper()
	qemuCheckClean(t, img)
	if !backing {
		if out, err := exec.Command("qemu-img", "compare", "-f", "raw", "-F", "qcow2", src, img).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img compare: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "qemu.raw")
	qemuOut(t, "qemu-img", "convert", "-O", "raw", img, raw)
	padded := append(append([]byte(nil), want...), make([]byte, (512-len(want)%512)%512)...)
	sameImageBytes(t, "qemu-img convert -O raw", raw, padded)
	ours := filepath.Join(dir, "ringcp.raw")
	cli(t, "--src-format", "qcow2", img, ours).want(t, exitOK)
	sameImageBytes(t, "ringcp's read of the image", ours, padded)
}

func sameImageBytes(t *testing.T, what, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: %d bytes, want %d; first difference at %d", what, len(got), len(want), i)
	}
}

// TestQcow2DstResume: stopped by kill -9 twice (once in a resumed run)
// and by SIGTERM, for plain, zstd and zlib images, over a backing file,
// at cluster sizes from 512 B to 2 MiB, the copy ends with the image of
// SRC; every partial image on the way is clean to qemu-img check.
func TestQcow2DstResume(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, c := range []struct {
		name string
		args []string
		size int64
	}{
		{"plain", nil, 20<<20 + 4097},
		{"zstd", []string{"--compress", "zstd"}, 20<<20 + 511},
		{"zlib 4k", []string{"--compress", "zlib", "--cluster-size", "4k"}, 18<<20 + 1},
		{"512", []string{"--cluster-size", "512"}, 18<<20 + 3},
		{"2M zstd", []string{"--compress", "zstd", "--cluster-size", "2M"}, 22<<20 + 4097},
		{"backing", []string{"--backing", "base.raw"}, 20<<20 + 4097},
		{"backing zstd", []string{"--backing", "base.raw", "--compress", "zstd"}, 20<<20 + 511},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.raw")
			want := mixedSource(t, src, c.size, c.size)
			backing := len(c.args) > 0 && c.args[0] == "--backing"
			if backing {
				base := mixedSource(t, filepath.Join(dir, "base.raw"), c.size/2, 9)
				copy(want, base[:2<<20]) // a part the same as the backing file: not stored
				if err := os.WriteFile(src, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dst := filepath.Join(dir, "dst.qcow2")
			partial, state := dst+".ringcp-partial", copier.StatePath(dst)
			args := append(append([]string{"--dst-format", "qcow2"}, c.args...), src, dst)
			var last int64
			finished := false
			for i, stop := range []struct {
				at  int64
				sig syscall.Signal
			}{{3 << 20, syscall.SIGKILL}, {9 << 20, syscall.SIGKILL}, {14 << 20, syscall.SIGTERM}} {
				done := stopAt(t, state, stop.at, stop.sig, args...)
				t.Logf("stop %d (%v): the state records %d", i, stop.sig, done)
				if _, err := os.Stat(dst); err == nil {
					finished = true // before the stop came
					break
				}
				qemuCheckClean(t, partial)
				if done < last {
					t.Fatalf("the state went back from %d to %d", last, done)
				}
				last = done
			}
			if !finished {
				r := cli(t, append([]string{"--resume"}, args...)...)
				r.want(t, exitOK)
				if last > copier.CellSize && !strings.Contains(r.stderr, "resumed") {
					t.Errorf("the last run did not resume:\n%s", r.stderr)
				}
			}
			if last <= copier.CellSize {
				t.Errorf("no stop came after the state recorded a cell: nothing was resumed")
			}
			if _, err := os.Stat(partial); err == nil {
				t.Fatal("the partial image is still there")
			}
			checkImage(t, dst, src, want, backing)
		})
	}
}

// TestQcow2DstResumeRefusesChanges: after a kill -9, a partial image
// whose copied part was changed (a byte of a data cluster, an L2 entry
// made to point at another cluster), a rerun that would make another
// image (other compression, another cluster size, raw), and a changed
// SRC are each refused (exit 2) or fail, never exit 0; the untouched
// rerun then completes with SRC's image.
func TestQcow2DstResumeRefusesChanges(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.raw")
	want := mixedSource(t, src, 20<<20+4097, 77)
	dst := filepath.Join(dir, "dst.qcow2")
	partial, state := dst+".ringcp-partial", copier.StatePath(dst)
	args := []string{"--dst-format", "qcow2", "--compress", "zstd", src, dst}
	done := stopAt(t, state, 10<<20, syscall.SIGKILL, args...)
	qemuCheckClean(t, partial)
	keep, err := os.ReadFile(partial)
	if err != nil {
		t.Fatal(err)
	}

	cli(t, "--resume", "--dst-format", "qcow2", src, dst).want(t, 2, `compress=""`)
	cli(t, "--resume", src, dst).want(t, 2, "makes a raw DST")
	cli(t, "--resume", "--dst-format", "qcow2", "--compress", "zstd", "--cluster-size", "4k", src, dst).want(t, 2, "cluster_size=4096")

	host := dataHostBelow(t, partial, done/copier.CellSize*copier.CellSize)
	flipByte(t, partial, host+100)
	if r := cli(t, append([]string{"--resume"}, args...)...); r.code == exitOK {
		t.Fatalf("a partial image changed in its copied part was resumed:\n%s", r.stderr)
	}
	putBack(t, partial, keep)

	l2 := firstL2Entry(t, partial)
	f, err := os.OpenFile(partial, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0, 0, 0, 0, 0, 0x02, 0}, l2); err != nil { // another host cluster, without the flags ringcp writes
		t.Fatal(err)
	}
	f.Close()
	cli(t, append([]string{"--resume"}, args...)...).want(t, 2)
	putBack(t, partial, keep)

	other := append([]byte(nil), want...)
	other[5<<20] ^= 1
	if err := os.WriteFile(src, other, 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, append([]string{"--resume"}, args...)...).want(t, 2, "changed")
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, append([]string{"--resume"}, args...)...).want(t, 2, "changed") // a new inode: another SRC

	os.Remove(state)
	os.Remove(partial)
	cli(t, append([]string{"--resume"}, args...)...).want(t, exitOK)
	checkImage(t, dst, src, want, false)
}

// dataHostBelow is the host offset of a data cluster of img whose guest
// offset lies below end.
func dataHostBelow(t *testing.T, img string, end int64) int64 {
	t.Helper()
	var m []struct {
		Start, Length int64
		Data          bool
		Offset        *int64
	}
	if err := json.Unmarshal(qemuOut(t, "qemu-img", "map", "--output=json", img), &m); err != nil {
		t.Fatal(err)
	}
	for _, e := range m {
		if e.Data && e.Offset != nil && e.Start < end {
			return *e.Offset
		}
	}
	t.Fatalf("no data cluster below %d in %s", end, img)
	return 0
}

// firstL2Entry is the file offset of the first L2 entry of img's first
// L2 table.
func firstL2Entry(t *testing.T, img string) int64 {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	be := func(off int) uint64 {
		var v uint64
		for _, c := range b[off : off+8] {
			v = v<<8 | uint64(c)
		}
		return v
	}
	l1 := be(40)
	return int64(be(int(l1)) & 0x00fffffffffffe00)
}
