package copier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestQcow2DstResumable: a resumable copy (Options.Resume) into a new
// image of an awkward size, in each way an image is made, completes as a
// copy without Resume does: clean to qemu-img check, SRC's bytes to
// qemu-img convert -O raw, no more allocated than qemu-img's own image,
// no state or partial file left, verified.
func TestQcow2DstResumable(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	ways := []struct {
		name  string
		q     copier.Qcow2Options
		qemuO []string
	}{
		{"plain", copier.Qcow2Options{}, nil},
		{"zstd", copier.Qcow2Options{Compress: "zstd"}, []string{"-c", "-o", "compression_type=zstd"}},
		{"zlib 4k", copier.Qcow2Options{Compress: "zlib", ClusterSize: 4096}, []string{"-c", "-o", "cluster_size=4096"}},
		{"512", copier.Qcow2Options{ClusterSize: 512}, []string{"-o", "cluster_size=512"}},
		{"prealloc", copier.Qcow2Options{Preallocation: copier.PreallocMetadata}, []string{"-o", "preallocation=metadata"}},
	}
	for _, size := range []int64{0, 1, 511, 4097, 5<<20 + 3} {
		for _, w := range ways {
			t.Run(fmt.Sprintf("%d/%s", size, w.name), func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "src")
				b := randomBytes(size, uint64(size)+7)
				if size > 2<<20 {
					clear(b[1<<20 : 2<<20])
				}
				writeFile(t, src, b)
				dst := filepath.Join(dir, "out.qcow2")
				o := copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2, Qcow2: w.q, Resume: true, Verify: true}
				if _, err := copier.Copy(context.Background(), o); err != nil {
					t.Fatal(err)
				}
				for _, left := range []string{dst + ".ringcp-partial", copier.StatePath(dst)} {
					if _, err := os.Stat(left); err == nil {
						t.Errorf("%s is left", left)
					}
				}
				qemu(t, "qemu-img", "check", "-q", dst)
				got, _ := os.ReadFile(qemuRaw(t, dst, dir))
				want := append(b, make([]byte, imageSizeOf(size)-size)...)
				if !bytes.Equal(got, want) {
					t.Fatalf("qemu-img reads %d bytes that differ at %d from SRC's %d", len(got), firstDiff(got, want), len(want))
				}
				theirs := filepath.Join(dir, "qemu.qcow2")
				qemu(t, "qemu-img", append(append([]string{"convert", "-q", "-f", "raw", "-O", "qcow2"}, w.qemuO...), src, theirs)...)
				// Up to a copy of the L2 tables more, where clusters are
				// smaller than the filesystem's blocks: the tables of
				// the checkpoints, freed, are punched, and punching a
				// 512-byte cluster of a 4 KiB block frees nothing.
				tables := int64(0)
				if w.q.ClusterSize != 0 && w.q.ClusterSize < 4096 {
					tables = 2 * (size/w.q.ClusterSize*8 + 4096)
				}
				if g, q := dataBytes(t, dst), dataBytes(t, theirs); g > q+64<<10+tables {
					t.Errorf("the image allocates %d bytes, qemu-img's %d", g, q)
				}
			})
		}
	}
}

// stateDone is what the state file at path records as done, -1 when
// there is none.
func stateDone(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	var st struct{ Done int64 }
	if json.Unmarshal(b, &st) != nil {
		return -1
	}
	return st.Done
}

// stopResumable runs the resumable copy o until its state records n
// bytes, and stops it as a signal would (its context cancelled).
func stopResumable(t *testing.T, o copier.Options, n int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, err := copier.Copy(ctx, o); errc <- err }()
	state := copier.StatePath(o.Dst)
	deadline := time.Now().Add(60 * time.Second)
	for stateDone(state) < n {
		select {
		case err := <-errc:
			t.Fatalf("the copy ended before its state recorded %d bytes: %v", n, err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the state does not record %d bytes after 60 s", n)
		}
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the stopped copy succeeded")
	}
}

// TestQcow2DstResumeBackingChanged: a copy into an image over a backing
// file, stopped, is not resumed to exit 0 once the backing file changed where the image
// reads it: the part copied reads differently now. With the backing file
// as it was, it resumes and ends as SRC's image.
func TestQcow2DstResumeBackingChanged(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src, base := filepath.Join(dir, "src"), filepath.Join(dir, "base.raw")
	b := randomBytes(12<<20+4097, 3)
	baseBytes := append([]byte(nil), b[:6<<20]...)
	writeFile(t, src, b)
	writeFile(t, base, baseBytes)
	dst := filepath.Join(dir, "out.qcow2")
	o := copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: "base.raw"},
		Resume: true, SyncEvery: 50 * time.Millisecond, MaxRate: 4 << 20, BlockSize: 256 << 10}
	stopResumable(t, o, 5<<20)
	qemu(t, "qemu-img", "check", "-q", dst+".ringcp-partial")
	changed := append([]byte(nil), baseBytes...)
	changed[1<<20] ^= 0xff
	writeFile(t, base, changed)
	o.MaxRate = 0
	if _, err := copier.Copy(context.Background(), o); err == nil {
		t.Fatal("resumed over a changed backing file")
	}
	writeFile(t, base, baseBytes)
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed == 0 {
		t.Error("the copy did not resume")
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", src, dst)
}

// TestQcow2DstResumeBackingReplaced: a rerun refused because the backing
// file was replaced (renamed over) since the earlier run names the
// backing file, not the partial image, as what changed.
func TestQcow2DstResumeBackingReplaced(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src, base := filepath.Join(dir, "src"), filepath.Join(dir, "base.raw")
	b := randomBytes(12<<20+4097, 5)
	baseBytes := append([]byte(nil), b[:6<<20]...)
	writeFile(t, src, b)
	writeFile(t, base, baseBytes)
	dst := filepath.Join(dir, "out.qcow2")
	o := copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: "base.raw"},
		Resume: true, SyncEvery: 50 * time.Millisecond, MaxRate: 4 << 20, BlockSize: 256 << 10}
	stopResumable(t, o, 5<<20)
	other := filepath.Join(dir, "other.raw")
	changed := append([]byte(nil), baseBytes...)
	changed[1<<20] ^= 0xff
	writeFile(t, other, changed)
	if err := os.Rename(other, base); err != nil {
		t.Fatal(err)
	}
	o.MaxRate = 0
	_, err := copier.Copy(context.Background(), o)
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || refused.Path != base || !strings.Contains(err.Error(), "backing file changed") {
		t.Fatalf("err = %v; want the refusal to name the backing file %s", err, base)
	}
}
