package ring

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// register wraps io_uring_register; EINTR is retried (the kernel may be
// interrupted while it quiesces the ring).
func (r *Ring) register(name string, opcode uint32, arg unsafe.Pointer, nr uint32) (int, error) {
	for {
		n, errno := registerSyscall(r.fd, opcode, arg, nr)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, fmt.Errorf("io_uring_register %s: %w", name, errno)
		}
		return n, nil
	}
}

// RegisterBuffers registers bufs as fixed buffers 0..len(bufs)-1, pinning
// them for READ_FIXED/WRITE_FIXED. They must come from an anonymous mmap
// (file-backed shared mappings fail with EFAULT) and stay mapped until
// UnregisterBuffers or Close. ENOMEM means RLIMIT_MEMLOCK is too small
// without CAP_IPC_LOCK: use plain READ/WRITE then.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	iov := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iov[i].Base = unsafe.SliceData(b)
		iov[i].SetLen(len(b))
	}
	// The kernel copies the iovec array during the call.
	_, err := r.register("buffers", registerBuffers, unsafe.Pointer(unsafe.SliceData(iov)), uint32(len(iov)))
	return err
}

// UnregisterBuffers drops all fixed buffers.
func (r *Ring) UnregisterBuffers() error {
	_, err := r.register("unregister buffers", unregisterBuffers, nil, 0)
	return err
}

// RegisterFiles registers fds as fixed files 0..len(fds)-1, used with
// SQEFixedFile and the index in place of the fd. It saves an fget/fput per
// request.
func (r *Ring) RegisterFiles(fds []int32) error {
	_, err := r.register("files", registerFiles, unsafe.Pointer(unsafe.SliceData(fds)), uint32(len(fds)))
	return err
}

// UnregisterFiles drops all fixed files.
func (r *Ring) UnregisterFiles() error {
	_, err := r.register("unregister files", unregisterFiles, nil, 0)
	return err
}

// SetIOWQMaxWorkers caps the kernel's async worker threads for this ring:
// bounded (regular file and block I/O that cannot be done inline) and
// unbounded (sockets, pipes). 0 leaves a value unchanged. It returns the
// previous limits (5.15+).
func (r *Ring) SetIOWQMaxWorkers(bounded, unbounded uint32) (prevBounded, prevUnbounded uint32, err error) {
	v := [2]uint32{bounded, unbounded}
	_, err = r.register("iowq max workers", registerIOWQMaxWorkers, unsafe.Pointer(&v), 2)
	return v[0], v[1], err
}
