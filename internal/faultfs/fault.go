package faultfs

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The operations a Fault can name.
const (
	OpRead  = "read"  // a READ request: pread, read, io_uring reads
	OpWrite = "write" // a WRITE request: pwrite, write, io_uring writes
	OpFsync = "fsync" // an FSYNC request: fsync and fdatasync; Offset is ignored
	// OpCorrupt corrupts a WRITE request silently: the byte at Offset is
	// stored inverted and the write succeeds, as bit rot, a bad cable or
	// a buggy server would; only reading the data back finds it. Its
	// Errno must be 0.
	OpCorrupt = "corrupt"
)

// MaxRequest is the largest READ or WRITE request the kernel sends the
// server (it is the mount's max_read and the server's max_write). An
// application read or write larger than this reaches the server as several
// requests of at most MaxRequest bytes each, so a fault fails only the
// piece that covers its offset. 128 KiB is the kernel's historical FUSE
// request size (max_pages 32 before Linux 4.20) and go-fuse's default.
const MaxRequest = 128 << 10

// Fault fails one kind of operation whose byte range covers Offset. A fault
// is permanent, like a bad sector: it fires on every matching request,
// not only the first.
type Fault struct {
	Op     string        // OpRead, OpWrite or OpFsync
	Offset int64         // fail any request whose [off, off+len) contains Offset
	Errno  syscall.Errno // e.g. syscall.EIO, syscall.ENOSPC; must not be 0

	// Name, if set, limits the fault to the file of that name in the
	// mount, so a copy's source and destination can share one mount. An
	// empty Name matches every file.
	Name string
}

// Options configure a mount made with MountWith. The zero value is what
// Mount gives: no faults, the page-cache mode, true sizes.
type Options struct {
	Faults []Fault

	// DirectIO answers every open and create with FOPEN_DIRECT_IO, as
	// virtiofs with cache=none, sshfs -o direct_io, rclone and mergerfs
	// with cache.files=off do: every read and write reaches the server
	// at the application's offsets, with or without O_DIRECT, and
	// io_uring completes a short READ or WRITE as whole (doc.go).
	DirectIO bool

	// PassDirect opens the backing file with the O_DIRECT the client
	// opened with, as go-fuse's loopback and virtiofsd (with direct I/O
	// allowed) do. The backing file system's O_DIRECT rules then apply
	// to what the server writes: a WRITE whose offset or length is not a
	// multiple of its block size fails with EINVAL, and clearing O_DIRECT
	// on the client's descriptor with fcntl does not reach the server
	// (FUSE sends no SETFL). A file created without O_DIRECT stays
	// buffered on the server.
	PassDirect bool

	// Inflate makes the file of each name look that many bytes longer
	// than its backing file: stat, lookup and lseek claim the longer
	// size, reads past the backing file's end return short or nothing.
	// It is a server whose file shrank after it reported the size, or
	// one that reports a size it cannot serve.
	Inflate map[string]int64
}

// Hit is one fault the server actually returned to the kernel.
type Hit struct {
	Op     string // OpRead, OpWrite or OpFsync
	Name   string // the file's name in the mount, as it was when opened
	Offset int64  // the request's offset (0 for fsync)
	Len    int    // the request's length in bytes (0 for fsync)
	Errno  syscall.Errno
}

// String renders a hit the way a failing test wants to print it.
func (h Hit) String() string {
	return fmt.Sprintf("%s %s [%d,+%d): %v", h.Op, h.Name, h.Offset, h.Len, h.Errno)
}

// FS is a mounted fault filesystem. Mount returns it; it is safe for
// concurrent use.
type FS struct {
	Dir     string // the mount point
	Backing string // the absolute path of the backing directory

	faults     []Fault
	directIO   bool
	passDirect bool
	inflate    map[string]int64

	mu   sync.Mutex
	hits []Hit

	// unmountMu serialises Unmount and the cleanup; the fields below
	// it are guarded by it.
	unmountMu sync.Mutex
	server    *fuse.Server
	dev       uint64 // st_dev of the mount, which names its fusectl connection
	unmounted bool
	stuck     bool // a server.Unmount timed out and may still be running
}

// Path returns the path of the file name as seen through the mount.
func (fs *FS) Path(name string) string {
	return filepath.Join(fs.Dir, name)
}

// Hits returns every fault the server returned so far, in the order they
// fired.
func (fs *FS) Hits() []Hit {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.hits)
}

// validate rejects faults that could never fire and sizes that could not
// be claimed.
func (o Options) validate() error {
	for _, f := range o.Faults {
		if err := f.validate(); err != nil {
			return err
		}
	}
	for name, n := range o.Inflate {
		if n <= 0 {
			return fmt.Errorf("faultfs: Inflate[%q] = %d: want a positive number of bytes", name, n)
		}
	}
	return nil
}

// validate rejects a fault that could never fire or would pass as success.
func (f Fault) validate() error {
	switch f.Op {
	case OpRead, OpWrite, OpFsync, OpCorrupt:
	default:
		return fmt.Errorf("faultfs: fault op %q: want %q, %q, %q or %q", f.Op, OpRead, OpWrite, OpFsync, OpCorrupt)
	}
	if f.Offset < 0 {
		return fmt.Errorf("faultfs: %s fault at negative offset %d", f.Op, f.Offset)
	}
	if f.Op == OpCorrupt {
		if f.Errno != 0 {
			return fmt.Errorf("faultfs: a corruption at offset %d fails nothing: its errno must be 0", f.Offset)
		}
		return nil
	}
	if f.Errno == 0 {
		// Errno 0 would be sent to the kernel as success with no data.
		return fmt.Errorf("faultfs: %s fault at offset %d has no errno", f.Op, f.Offset)
	}
	return nil
}

// matches reports whether f fails the request op on file name covering
// [off, off+n). An empty request (n == 0) covers no offset.
func (f Fault) matches(op, name string, off int64, n int) bool {
	if f.Op != op || (f.Name != "" && f.Name != name) {
		return false
	}
	if op == OpFsync {
		return true
	}
	return off <= f.Offset && f.Offset-off < int64(n)
}

// corruption returns the offsets, within a WRITE request of n bytes at off
// on file name, of the bytes an OpCorrupt fault inverts, after recording
// the hits.
func (fs *FS) corruption(name string, off int64, n int) []int {
	var at []int
	for _, f := range fs.faults {
		if f.Op != OpCorrupt || !(Fault{Op: OpWrite, Offset: f.Offset, Name: f.Name}).matches(OpWrite, name, off, n) {
			continue
		}
		fs.mu.Lock()
		fs.hits = append(fs.hits, Hit{Op: OpCorrupt, Name: name, Offset: off, Len: n})
		fs.mu.Unlock()
		at = append(at, int(f.Offset-off))
	}
	return at
}

// inject returns the errno of the first fault that fails the request, after
// recording the hit, or 0 when the request should go through.
func (fs *FS) inject(op, name string, off int64, n int) syscall.Errno {
	for _, f := range fs.faults {
		if !f.matches(op, name, off, n) {
			continue
		}
		fs.mu.Lock()
		fs.hits = append(fs.hits, Hit{Op: op, Name: name, Offset: off, Len: n, Errno: f.Errno})
		fs.mu.Unlock()
		return f.Errno
	}
	return 0
}
