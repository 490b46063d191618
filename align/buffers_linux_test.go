package align

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func TestAllocBuffers(t *testing.T) {
	const n, size = 4, 5000 // size deliberately not a page multiple
	b, err := AllocBuffers(n, size)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	page := uintptr(os.Getpagesize())
	if b.Len() != n || b.SlotSize != size || b.Stride != 2*int(page) {
		t.Fatalf("Len %d SlotSize %d Stride %d, want %d %d %d", b.Len(), b.SlotSize, b.Stride, n, size, 2*page)
	}
	for i, s := range b.Slots {
		if len(s) != size || cap(s) != size {
			t.Errorf("slot %d: len %d cap %d, want %d", i, len(s), cap(s), size)
		}
		if addr(s)%page != 0 {
			t.Errorf("slot %d at %#x, not page aligned", i, addr(s))
		}
		if i > 0 && addr(s) != addr(b.Slots[i-1])+uintptr(b.Stride) {
			t.Errorf("slot %d at %#x, want %#x: slots overlap or are not one mapping",
				i, addr(s), addr(b.Slots[i-1])+uintptr(b.Stride))
		}
		if bytes.Count(s, []byte{0}) != size {
			t.Errorf("slot %d: fresh memory is not zero", i)
		}
	}
	for i, s := range b.Slots {
		for j := range s {
			s[j] = byte(i + 1)
		}
	}
	for i, s := range b.Slots {
		if c := bytes.Count(s, []byte{byte(i + 1)}); c != size {
			t.Errorf("slot %d: %d of %d bytes still hold its own pattern", i, c, size)
		}
	}
	if err := b.Free(); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if err := b.Free(); err != nil {
		t.Fatalf("second Free: %v", err)
	}
	if b.Len() != 0 || b.Slots != nil {
		t.Errorf("after Free: Len %d, Slots %v", b.Len(), b.Slots)
	}
}

func TestAllocBuffersBadArgs(t *testing.T) {
	tests := []struct {
		n, size int
		want    error
	}{
		{0, 4096, unix.EINVAL},
		{4, 0, unix.EINVAL},
		{-1, 4096, unix.EINVAL},
		{4, -4096, unix.EINVAL},
		{math.MaxInt / 4096, 8192, unix.ENOMEM},
	}
	for _, tt := range tests {
		b, err := AllocBuffers(tt.n, tt.size)
		if !errors.Is(err, tt.want) {
			t.Errorf("AllocBuffers(%d, %d) = %v, want %v", tt.n, tt.size, err, tt.want)
		}
		if b != nil {
			b.Free()
		}
	}
}

func TestBuffersFreeConcurrent(t *testing.T) {
	b, err := AllocBuffers(2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Free(); err != nil {
				t.Errorf("Free: %v", err)
			}
		}()
	}
	wg.Wait()
}

// TestBuffersOffHeap checks the slots do not count as Go heap: 64 MiB of
// slots must not move HeapAlloc by more than bookkeeping.
func TestBuffersOffHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := AllocBuffers(8, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("Go heap grew by %d bytes for 64 MiB of slots", grew)
	}
}

// TestBuffersDirectRoundTrip writes one slot to a file opened with
// O_DIRECT and reads it back into another slot: the kernel accepts the
// slots as O_DIRECT buffers and the bytes survive.
func TestBuffersDirectRoundTrip(t *testing.T) {
	const size, off = 64 << 10, 8192
	path := filepath.Join(t.TempDir(), "direct")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
	if errors.Is(err, unix.EINVAL) {
		t.Skipf("the file system of %s refuses O_DIRECT: %v", path, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := AllocBuffers(2, size)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	for i := range b.Slots[0] {
		b.Slots[0][i] = byte(rand.Uint32())
	}
	if n, err := f.WriteAt(b.Slots[0], off); err != nil || n != size {
		t.Fatalf("O_DIRECT pwrite: %d, %v", n, err)
	}
	if n, err := f.ReadAt(b.Slots[1], off); err != nil || n != size {
		t.Fatalf("O_DIRECT pread: %d, %v", n, err)
	}
	if !bytes.Equal(b.Slots[0], b.Slots[1]) {
		t.Fatal("read back differs from what was written")
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != off+size || !bytes.Equal(onDisk[off:], b.Slots[0]) {
		t.Fatalf("buffered read sees %d bytes, or other data", len(onDisk))
	}
}
