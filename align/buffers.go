package align

import (
	"sync"
	"unsafe"
)

// Buffers is a set of equal, page-aligned I/O buffers ("slots") in one
// anonymous mapping outside the Go heap.
//
// The garbage collector neither moves nor scans the memory, so a slot's
// address is stable for the kernel (O_DIRECT DMA, io_uring fixed buffers
// registered with IORING_REGISTER_BUFFERS, which rejects file-backed
// shared mappings with EFAULT but takes anonymous ones). Slots are not
// zeroed after use; fresh ones read as zero.
type Buffers struct {
	// Slots holds the buffers, each exactly SlotSize bytes long and with
	// capacity SlotSize, so an append cannot spill into the next slot.
	// Slot i starts at byte i*Stride of the mapping.
	Slots [][]byte
	// SlotSize is the size asked for in AllocBuffers.
	SlotSize int
	// Stride is SlotSize rounded up to the page size: the distance
	// between the starts of two slots, so every slot is page aligned.
	Stride int

	mu     sync.Mutex     // guards mem and length against a double Free
	mem    unsafe.Pointer // start of the mapping, nil once freed
	length uintptr        // bytes mapped
}

// Len returns the number of slots, 0 after Free.
func (b *Buffers) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.Slots)
}

// carve cuts the mapping at mem into n slots of size bytes, stride apart.
func carve(mem unsafe.Pointer, n, size, stride int) [][]byte {
	slots := make([][]byte, n)
	for i := range slots {
		p := (*byte)(unsafe.Add(mem, i*stride))
		slots[i] = unsafe.Slice(p, size)
	}
	return slots
}
