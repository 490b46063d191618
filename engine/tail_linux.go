package engine

import "golang.org/x/sys/unix"

// bufferTail prepares DST for the unaligned last block, which O_DIRECT
// cannot write: with no FileDstTail, it clears O_DIRECT on DST's open file
// description with F_SETFL, as GNU dd does for its last partial block. The
// tail is written after every other write has completed, so no O_DIRECT
// write is in flight when the flag changes, and the page cache never holds
// a page that an O_DIRECT write is changing. Using the same descriptor
// (rather than opening DST again by name) writes the very inode that was
// checked, works for an unnamed O_TMPFILE inode without /proc, and leaves
// one descriptor for the barrier to sync.
func (j *Job) bufferTail() error {
	if j.Files[FileDstTail] != nil {
		return nil
	}
	fd := int(j.Files[FileDst].Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_DIRECT == 0 {
		return err
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&^unix.O_DIRECT)
	return err
}
