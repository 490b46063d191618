package align

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AllocBuffers maps n slots of size bytes each in one anonymous private
// mapping (MAP_PRIVATE|MAP_ANONYMOUS), backed by huge pages where the
// kernel gives them, and faulted in at once. Every slot starts on a page
// boundary. That covers the O_DIRECT memory alignment of every
// device seen so far (dio_mem_align is usually dma_alignment+1, 512 or
// less); a caller facing an exotic device can check a slot against
// Geometry.MemAlign with IsAligned.
//
// The pages are faulted in now rather than during the first timed reads;
// io_uring buffer registration would pin (and so fault) them anyway. The
// memory is not locked: pinning for fixed buffers is
// io_uring's business and counts against RLIMIT_MEMLOCK there.
//
// n and size must be positive. Call Free when no I/O uses the slots.
func AllocBuffers(n, size int) (*Buffers, error) {
	if n <= 0 || size <= 0 {
		return nil, fmt.Errorf("align: AllocBuffers(%d, %d): count and size must be positive: %w",
			n, size, unix.EINVAL)
	}
	stride := int(RoundUp(int64(size), int64(os.Getpagesize())))
	if stride <= 0 || n > math.MaxInt/stride {
		return nil, fmt.Errorf("align: AllocBuffers(%d, %d): too large: %w", n, size, unix.ENOMEM)
	}
	length := uintptr(n * stride)
	// Map a huge page more than needed, so the slots can start on a 2 MiB
	// boundary where transparent huge pages can back them.
	mem, err := unix.MmapPtr(-1, 0, nil, length+hugePage, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("align: AllocBuffers(%d, %d): %w", n, size, os.NewSyscallError("mmap", err))
	}
	start := unsafe.Add(mem, hugePage-uintptr(mem)%hugePage)
	populate(start, length)
	return &Buffers{
		Slots:    carve(start, n, size, stride),
		SlotSize: size,
		Stride:   stride,
		mem:      mem,
		length:   length + hugePage,
	}, nil
}

const hugePage = 2 << 20

// populate asks for transparent huge pages (THP in "madvise" mode, the
// common default, gives them only to those who ask) and faults the memory
// in now rather than during the first timed reads. With huge pages the
// kernel pins and maps a few hundred pages per 1 GiB of buffers instead of
// a quarter million, and the zero scan takes a TLB miss per 2 MiB instead
// of per 4 KiB. Both calls are hints: on error the pages fault in as used.
func populate(p unsafe.Pointer, length uintptr) {
	b := unsafe.Slice((*byte)(p), length)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) != nil { // 5.14+
		for i := uintptr(0); i < length; i += 4096 {
			b[i] = 0
		}
	}
}

// Free unmaps the buffers and empties Slots. It is safe to call more
// than once (later calls return nil) and from several goroutines. Slices
// of the slots kept elsewhere must not be touched afterwards: the memory
// is gone and an access faults.
func (b *Buffers) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem == nil {
		return nil
	}
	if err := unix.MunmapPtr(b.mem, b.length); err != nil {
		return fmt.Errorf("align: free buffers: %w", os.NewSyscallError("munmap", err))
	}
	b.mem, b.length, b.Slots = nil, 0, nil
	return nil
}
