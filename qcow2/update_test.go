package qcow2

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// updateShapes are the images an Updater writes into: every cluster
// size, both versions, compressed clusters, zero clusters and discards,
// chains, preallocated metadata, and an awkward virtual size.
func updateShapes() []shape {
	s := []shape{}
	for _, cs := range []string{"512", "4k", "64k", "2M"} {
		s = append(s, shape{"v3/cluster=" + cs, converted(5<<20+512, "-o", "cluster_size="+cs)})
	}
	return append(s,
		shape{"v2/compat=0.10", converted(5<<20, "-o", "compat=0.10")},
		shape{"v2/compat=0.10/512", converted(1<<20, "-o", "compat=0.10,cluster_size=512")},
		shape{"zlib/64k", converted(5<<20, "-c", "-o", "compression_type=zlib")},
		shape{"zstd/4k", converted(3<<20, "-c", "-o", "compression_type=zstd,cluster_size=4k")},
		shape{"v2/zlib", converted(3<<20, "-c", "-o", "compat=0.10")},
		shape{"edited/v3", edited("8M", "cluster_size=64k")},
		shape{"edited/v2", edited("8M", "compat=0.10")},
		shape{"chain3/qcow2", chain3(false)},
		shape{"chain3/raw", chain3(true)},
		shape{"prealloc=metadata", converted(3<<20, "-o", "preallocation=metadata")},
		shape{"empty/awkward size", func(t *testing.T, dir string) string {
			img := filepath.Join(dir, "img.qcow2")
			qemuImg(t, "create", "-q", "-f", "qcow2", "-o", "cluster_size=4k", img, "4609")
			return img
		}},
	)
}

// updateOp is one write of the test: data (seeded bytes) or zeros.
type updateOp struct {
	off, n int64
	zero   bool
}

// updateOps are writes at awkward places: the first and last bytes,
// pieces of clusters, runs of many clusters, zeros over data.
func updateOps(size int64, seed int64) []updateOp {
	rng := rand.New(rand.NewSource(seed))
	ops := []updateOp{{0, 1, false}, {size - 1, 1, false}, {511, 4097, false}}
	for range 24 {
		off := rng.Int63n(size)
		n := min(rng.Int63n(1<<20)+1, size-off)
		if rng.Intn(3) == 0 {
			off, n = off&^4095, min((n+4095)&^4095, size-off&^4095)
		}
		ops = append(ops, updateOp{off, n, rng.Intn(3) == 0})
	}
	return append(ops, updateOp{0, min(size, 64<<10+3), true})
}

// apply writes op into u and into want.
func (op updateOp) apply(t *testing.T, u *Updater, want []byte, seed int64) {
	t.Helper()
	if op.zero {
		clear(want[op.off : op.off+op.n])
		if err := u.WriteZeroes(op.off, op.n); err != nil {
			t.Fatalf("WriteZeroes(%d, %d): %v", op.off, op.n, err)
		}
		return
	}
	p := make([]byte, op.n)
	rand.New(rand.NewSource(seed)).Read(p)
	copy(want[op.off:], p)
	if n, err := u.WriteAt(p, op.off); err != nil || n != len(p) {
		t.Fatalf("WriteAt(%d bytes at %d) = %d, %v", op.n, op.off, n, err)
	}
}

// TestUpdater: writes, in order and then from many goroutines at once
// (pieces that share clusters), into each shape: qemu-img check finds
// the image clean, and it reads (through QEMU and this package) as the
// writes made it.
func TestUpdater(t *testing.T) {
	needQemu(t)
	for _, s := range updateShapes() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			img := s.make(t, t.TempDir())
			want := rawOf(t, img)
			f, err := os.OpenFile(img, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			u, err := OpenUpdater(f, Options{Opener: FileOpener})
			if err != nil {
				t.Fatal(err)
			}
			size := u.Size()
			if size != int64(len(want)) {
				t.Fatalf("size %d, qemu-img says %d", size, len(want))
			}
			if size > 0 {
				for i, op := range updateOps(size, int64(len(s.name))) {
					op.apply(t, u, want, int64(i))
				}
				concurrentOps(t, u, want)
			}
			if err := u.Close(); err != nil {
				t.Fatal(err)
			}
			qemuCheck(t, img)
			sameBytes(t, "qemu-img's read of the updated image", rawOf(t, img), want)
			checkRead(t, openPath(t, img, Options{}), want)
		})
	}
}

// concurrentOps cuts the disk into pieces at odd offsets, so that
// neighbours share clusters, and writes them from goroutines at once,
// every third piece as zeros.
func concurrentOps(t *testing.T, u *Updater, want []byte) {
	size := int64(len(want))
	var ops []updateOp
	for off, i := int64(0), 0; off < size; i++ {
		n := min(int64(100<<10+i*777), size-off)
		ops = append(ops, updateOp{off, n, i%3 == 2})
		off += n
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, op.n)
			if !op.zero {
				rand.New(rand.NewSource(int64(1000 + i))).Read(p)
			}
			mu.Lock()
			copy(want[op.off:], p)
			mu.Unlock()
			var err error
			if op.zero {
				err = u.WriteZeroes(op.off, op.n)
			} else {
				_, err = u.WriteAt(p, op.off)
			}
			if err != nil {
				t.Errorf("op %+v: %v", op, err)
			}
		}()
	}
	wg.Wait()
}

// TestUpdaterRefusals: what an Updater does not maintain is refused
// before anything is written.
func TestUpdaterRefusals(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", snap, "1M")
	qemuIO(t, "qcow2", snap, "write -P 1 0 64k")
	qemuImg(t, "snapshot", "-c", "s1", snap)
	bitmap := filepath.Join(dir, "bitmap.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", bitmap, "1M")
	qemuImg(t, "bitmap", "--add", bitmap, "b0")
	ext := filepath.Join(dir, "ext.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-o", "extended_l2=on", ext, "1M")
	for _, c := range []struct{ img, want string }{
		{snap, "internal snapshots"}, {bitmap, "bitmaps"}, {ext, "extended L2"},
	} {
		before, _ := os.ReadFile(c.img)
		f, err := os.OpenFile(c.img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = OpenUpdater(f, Options{})
		f.Close()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a refusal naming %q", c.img, err, c.want)
		}
		after, _ := os.ReadFile(c.img)
		if string(before) != string(after) {
			t.Errorf("%s changed", c.img)
		}
	}
}

// TestUpdaterPending: writes into clusters the image stores alone leave
// Pending at the size; a write that needs a new cluster, or a zero
// cluster, brings it down to that cluster, and the image abandoned
// there reads (through QEMU) the writes below it.
func TestUpdaterPending(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "img.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", img, "1M")
	qemuIO(t, "qcow2", img, "write -P 1 0 256k")
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, err := OpenUpdater(f, Options{Opener: FileOpener})
	if err != nil {
		t.Fatal(err)
	}
	want := rawOf(t, img)
	updateOp{0, 100 << 10, false}.apply(t, u, want, 1)
	updateOp{100 << 10, 28 << 10, false}.apply(t, u, want, 2)
	if got := u.Pending(); got != 1<<20 {
		t.Fatalf("after writes in place: Pending %d, want the size", got)
	}
	if err := u.WriteZeroes(192<<10, 64<<10); err != nil {
		t.Fatal(err)
	}
	if got := u.Pending(); got != 192<<10 {
		t.Fatalf("after a zero cluster at 192k: Pending %d", got)
	}
	if _, err := u.WriteAt(make([]byte, 10), 512<<10+3); err != nil {
		t.Fatal(err)
	}
	if got := u.Pending(); got != 192<<10 {
		t.Fatalf("after a write into a new cluster past it: Pending %d", got)
	}
	if _, err := u.WriteAt([]byte{9}, 64<<10+5); err != nil { // in place: not pending
		t.Fatal(err)
	}
	want[64<<10+5] = 9
	u.Abandon()
	got := rawOf(t, img)
	sameBytes(t, "the abandoned image below Pending", got[:192<<10], want[:192<<10])
}
