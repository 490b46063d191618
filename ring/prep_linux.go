package ring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Prep helpers fill an SQE from GetSQE. Every one goes through prepRW and
// sets at most one more field, as liburing's do. Set UserData, Flags and
// IOPrio on the SQE afterwards as needed.

// prepRW is the common layout of read/write-like requests.
func (s *SQE) prepRW(op uint8, fd int32, addr uintptr, length uint32, offset uint64) {
	s.Opcode = op
	s.Fd = fd
	s.Off = offset
	s.Addr = uint64(addr)
	s.Len = length
}

// PrepNop prepares a request that does nothing and completes with 0.
func (s *SQE) PrepNop() {
	s.prepRW(OpNop, -1, 0, 0, 0)
}

// PrepRead reads len(buf) bytes at offset into buf (5.6+). buf must follow
// the buffer rule in the package doc.
func (s *SQE) PrepRead(fd int32, buf []byte, offset uint64) {
	s.prepRW(OpRead, fd, bufAddr(buf), uint32(len(buf)), offset)
}

// PrepWrite writes buf at offset (5.6+).
func (s *SQE) PrepWrite(fd int32, buf []byte, offset uint64) {
	s.prepRW(OpWrite, fd, bufAddr(buf), uint32(len(buf)), offset)
}

// PrepReadFixed reads into buf, which lies inside registered buffer
// bufIndex.
func (s *SQE) PrepReadFixed(fd int32, buf []byte, offset uint64, bufIndex uint16) {
	s.prepRW(OpReadFixed, fd, bufAddr(buf), uint32(len(buf)), offset)
	s.BufIndex = bufIndex
}

// PrepWriteFixed writes buf, which lies inside registered buffer bufIndex.
func (s *SQE) PrepWriteFixed(fd int32, buf []byte, offset uint64, bufIndex uint16) {
	s.prepRW(OpWriteFixed, fd, bufAddr(buf), uint32(len(buf)), offset)
	s.BufIndex = bufIndex
}

// PrepReadv reads into the buffers of iovecs. The iovec array itself is read
// by the kernel asynchronously: keep it alive and unmoved until completion.
func (s *SQE) PrepReadv(fd int32, iovecs []unix.Iovec, offset uint64) {
	s.prepRW(OpReadv, fd, iovecAddr(iovecs), uint32(len(iovecs)), offset)
}

// PrepWritev writes the buffers of iovecs; the same rule as PrepReadv.
func (s *SQE) PrepWritev(fd int32, iovecs []unix.Iovec, offset uint64) {
	s.prepRW(OpWritev, fd, iovecAddr(iovecs), uint32(len(iovecs)), offset)
}

// PrepFsync flushes fd; flags FsyncDatasync makes it an fdatasync. It is not
// ordered after writes still in flight: wait for their completions, or set
// SQEIODrain.
func (s *SQE) PrepFsync(fd int32, flags uint32) {
	s.prepRW(OpFsync, fd, 0, 0, 0)
	s.OpFlags = flags
}

// PrepFallocate calls fallocate(fd, mode, offset, length) (5.6+). The
// kernel reads the length from addr and the mode from len.
func (s *SQE) PrepFallocate(fd int32, mode uint32, offset, length uint64) {
	s.prepRW(OpFallocate, fd, uintptr(length), mode, offset)
}

func bufAddr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

func iovecAddr(v []unix.Iovec) uintptr {
	if len(v) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&v[0]))
}
