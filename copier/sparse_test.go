package copier_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
)

// sparseImage is a VM-image-like SRC: data, a hole, written zeros, data
// with an odd tail, and a hole at the end kept by size.
func sparseImage(t *testing.T, path string) []byte {
	t.Helper()
	const size = 24<<20 + 5000
	want := make([]byte, size)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	put := func(off int64, b []byte) {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
		copy(want[off:], b)
	}
	put(0, randomBytes(1<<20, 21))
	put(8<<20, make([]byte, 4<<20)) // written zeros: allocated in SRC
	put(12<<20, randomBytes(3<<20+777, 22))
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return want
}

func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestSparseFileToFile: holes and zero runs stay holes; DST takes no more
// room than SRC's data; the report splits data, holes and zeros.
func TestSparseFileToFile(t *testing.T) {
	for _, eng := range engines {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		want := sparseImage(t, src)
		rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng})
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		compareFile(t, dst, want)
		if got, max := allocated(t, dst), int64(4<<20+1<<20); got > max {
			t.Errorf("%s: DST allocates %d bytes, want at most the %d of data", eng, got, max)
		}
		if rep.Bytes+rep.BytesHoles+rep.BytesZeroed != int64(len(want)) || rep.BytesHoles < 16<<20 || rep.BytesZeroed != 0 {
			t.Errorf("%s: data %d holes %d zeroed %d of %d", eng, rep.Bytes, rep.BytesHoles, rep.BytesZeroed, len(want))
		}
	}
}

// TestSparseOverOldData: an existing DST full of old data, overwritten by a
// sparse SRC, in place (a range keeps DST from being truncated): no stale
// byte survives in the holes.
func TestSparseOverOldData(t *testing.T) {
	for _, eng := range engines {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		want := sparseImage(t, src)
		old := randomBytes(int64(len(want))+(1<<20), 23)
		writeFile(t, dst, old)
		o := copier.Options{Src: src, Dst: dst, Engine: eng, Length: int64(len(want)), LengthSet: true}
		rep, err := copier.Copy(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		compareFile(t, dst, append(append([]byte(nil), want...), old[len(want):]...))
		if rep.BytesZeroed < 16<<20 {
			t.Errorf("%s: zeroed %d bytes, want the holes and zero runs (>= 16 MiB)", eng, rep.BytesZeroed)
		}
	}
}

// TestSparseToLoopDevice: holes become zeros on a device full of old data;
// with --target-is-zero on a fresh device they are skipped.
func TestSparseToLoopDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	for _, eng := range engines {
		src := filepath.Join(t.TempDir(), "src")
		want := sparseImage(t, src)

		dev, _ := blocktest.Device(t, 32<<20, "--direct-io=on")
		writeFile(t, dev, randomBytes(32<<20, 24))
		rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dev, Engine: eng})
		if err != nil {
			t.Fatalf("%s: %v", eng, err)
		}
		compareDevicePrefix(t, dev, want)
		if rep.BytesZeroed < 16<<20 || rep.BytesHoles != 0 {
			t.Errorf("%s: zeroed %d, holes %d: every hole must be zeroed on a used device", eng, rep.BytesZeroed, rep.BytesHoles)
		}

		fresh, backing := blocktest.Device(t, 32<<20, "--direct-io=on")
		rep, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: fresh, Engine: eng, TargetIsZero: true})
		if err != nil {
			t.Fatalf("%s: --target-is-zero: %v", eng, err)
		}
		compareDevicePrefix(t, fresh, want)
		if rep.BytesZeroed != 0 || rep.BytesHoles < 16<<20 {
			t.Errorf("%s: --target-is-zero: zeroed %d, holes %d: zero ranges must be skipped", eng, rep.BytesZeroed, rep.BytesHoles)
		}
		if got := allocated(t, backing); got > 6<<20 {
			t.Errorf("%s: the fresh device's backing file grew to %d bytes: holes were written", eng, got)
		}
	}
}

// TestSparseNeverCopiesEverything: --sparse never writes every byte.
func TestSparseNeverCopiesEverything(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	want := sparseImage(t, src)
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Sparse: copier.SparseNever})
	if err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, want)
	if rep.Bytes != int64(len(want)) || rep.BytesHoles != 0 {
		t.Fatalf("data %d, holes %d: want all %d bytes as data", rep.Bytes, rep.BytesHoles, len(want))
	}
}
