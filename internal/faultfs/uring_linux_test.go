package faultfs

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A one-request io_uring, just enough to see what an IORING_OP_READ or
// _WRITE through the mount completes with: the engine's io_uring backend
// depends on FUSE completing them short and then with the fault's errno
// (see openFlags). Layouts are from include/uapi/linux/io_uring.h.

const (
	ioringOpRead  = 22
	ioringOpWrite = 23

	ioringOffSQRing = 0
	ioringOffCQRing = 0x8000000
	ioringOffSQEs   = 0x10000000

	ioringEnterGetEvents = 1

	sqeSize = 64
	cqeSize = 16
)

type ringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

type uringParams struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  ringOffsets
	CQOff                                                                  cqOffsets
}

// uringRW runs one read or write of buf at off on fd through a fresh ring
// and returns the completion's result: a byte count or a negated errno.
// It skips the test when io_uring is unavailable.
func uringRW(t *testing.T, op uint8, fd int, buf []byte, off int64) int32 {
	t.Helper()
	var p uringParams
	r, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		if errors.Is(errno, syscall.ENOSYS) || errors.Is(errno, syscall.EPERM) {
			t.Skipf("io_uring unavailable: %v", errno)
		}
		t.Fatalf("io_uring_setup: %v", errno)
	}
	ring := int(r)
	defer unix.Close(ring)

	sq := mapRing(t, ring, int(p.SQOff.Array+p.SQEntries*4), ioringOffSQRing)
	defer unix.Munmap(sq)
	cq := mapRing(t, ring, int(p.CQOff.CQEs+p.CQEntries*cqeSize), ioringOffCQRing)
	defer unix.Munmap(cq)
	sqes := mapRing(t, ring, int(p.SQEntries*sqeSize), ioringOffSQEs)
	defer unix.Munmap(sqes)

	sqe := sqes[:sqeSize] // the ring is empty: slot 0
	clear(sqe)
	sqe[0] = op
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
	*(*uint64)(unsafe.Pointer(&sqe[8])) = uint64(off)
	*(*uint64)(unsafe.Pointer(&sqe[16])) = uint64(uintptr(unsafe.Pointer(&buf[0])))
	*(*uint32)(unsafe.Pointer(&sqe[24])) = uint32(len(buf))
	*(*uint32)(unsafe.Pointer(&sq[p.SQOff.Array])) = 0
	// Release: the kernel reads the SQE after it sees the new tail.
	atomic.AddUint32((*uint32)(unsafe.Pointer(&sq[p.SQOff.Tail])), 1)

	_, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(ring), 1, 1, ioringEnterGetEvents, 0, 0)
	if errno != 0 {
		t.Fatalf("io_uring_enter: %v", errno)
	}
	// Acquire: pairs with the kernel's release of the CQ tail.
	head := atomic.LoadUint32((*uint32)(unsafe.Pointer(&cq[p.CQOff.Head])))
	if tail := atomic.LoadUint32((*uint32)(unsafe.Pointer(&cq[p.CQOff.Tail]))); tail == head {
		t.Fatalf("io_uring_enter returned with no completion")
	}
	mask := *(*uint32)(unsafe.Pointer(&cq[p.CQOff.RingMask]))
	cqe := p.CQOff.CQEs + (head&mask)*cqeSize
	return *(*int32)(unsafe.Pointer(&cq[cqe+8]))
}

func mapRing(t *testing.T, ring, size int, off int64) []byte {
	t.Helper()
	b, err := unix.Mmap(ring, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		t.Fatalf("mmap io_uring region %#x: %v", off, err)
	}
	return b
}
