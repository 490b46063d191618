package engine

// bufferTail prepares DST for the unaligned last block, which O_DIRECT
// cannot write: with no FileDstTail, DST's PrepareTail clears O_DIRECT on
// its open file description with F_SETFL, as GNU dd does for its last
// partial block (an NBD export needs nothing: the client writes partial
// blocks itself). The tail is written after every other write has
// completed, so no O_DIRECT write is in flight when the flag changes, and
// the page cache never holds a page that an O_DIRECT write is changing.
// Using the same descriptor (rather than opening DST again by name) writes
// the very inode that was checked, works for an unnamed O_TMPFILE inode
// without /proc, and leaves one descriptor for the barrier to sync.
func (j *Job) bufferTail() error {
	if j.end(FileDstTail) != nil {
		return nil
	}
	return j.end(FileDst).PrepareTail()
}
