package blocksync

import "io"

// Source is what a sync reads SRC through: a file or device on this host
// (OpenSource), or anything else that reads at offsets.
type Source interface {
	io.ReaderAt
	// Size is the number of bytes to sync.
	Size() int64
	// Name names the end in errors.
	Name() string
}

// Target is DST: it is read like a Source (reads past its size return
// io.EOF, and the sync takes those bytes for zeros), written where it
// differs, and sized and synced at the end.
type Target interface {
	Source
	io.WriterAt
	// Zero makes [off, off+n) read as zeros, punching a hole where it
	// can.
	Zero(off, n int64) error
	// Resizable says whether Truncate may change the size (a regular
	// file); a block device keeps its own.
	Resizable() bool
	// Truncate sets the size of a Resizable end.
	Truncate(size int64) error
	// Sync makes everything written durable (fsync).
	Sync() error
}

// Identity is which bytes an end is, comparable across hosts: a file by
// device and inode, a block device by its number, both on one boot of
// one machine (the kernel's boot_id). Two ends with equal Identities are
// the same bytes.
type Identity struct {
	Boot     string // /proc/sys/kernel/random/boot_id; "" when unknown
	Block    bool
	Rdev     uint64 // a block device's number
	Dev, Ino uint64 // a regular file's device and inode
}

// Same says whether a and b are surely the same bytes; ends whose boot
// is unknown are never the same.
func (a Identity) Same(b Identity) bool { return a.Boot != "" && a == b }
