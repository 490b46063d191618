package nbd

import (
	"io"
	"syscall"
)

// The synchronous helpers. Each waits for its own completions (they never
// reach Reap), so they are safe from many goroutines, beside an engine
// driving Submit and Reap.

// do submits req and waits for its completion.
func (cl *Client) do(req Request) (int64, error) {
	ch := make(chan Completion, 1)
	if err := cl.start(req, ch); err != nil {
		return 0, err
	}
	c := <-ch
	return c.N, c.Err
}

// ReadAt reads len(p) bytes at off (io.ReaderAt): at the export's end it
// returns fewer with io.EOF. Offsets and lengths not aligned to the
// server's minimum block size are served by reading the whole blocks
// around them.
func (cl *Client) ReadAt(p []byte, off int64) (int, error) {
	size := cl.info.Size
	if off < 0 {
		return 0, cl.refuse(Request{Op: OpRead, Off: off, Buf: p}, syscall.EINVAL, "negative offset")
	}
	if off >= size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	var eof error
	if int64(len(p)) > size-off {
		p, eof = p[:size-off], io.EOF
	}
	if err := cl.blocks(p, off, false); err != nil {
		return 0, err
	}
	return len(p), eof
}

// WriteAt writes p at off (io.WriterAt). Unaligned edges are written by
// read-modify-write of their blocks, which is not atomic against another
// writer of the same block. A write past the export's end writes nothing
// and fails with ENOSPC, as a block device does.
func (cl *Client) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || int64(len(p)) > cl.info.Size-off {
		return 0, cl.refuse(Request{Op: OpWrite, Off: off, Buf: p}, syscall.ENOSPC, "write past the end of the export")
	}
	if err := cl.blocks(p, off, true); err != nil {
		return 0, err
	}
	return len(p), nil
}

// blocks reads or writes p at off: whole aligned blocks straight from or
// into p, partial blocks through a bounce block.
func (cl *Client) blocks(p []byte, off int64, write bool) error {
	bs, size := int64(cl.info.BlockSize.Min), cl.info.Size
	op := OpRead
	if write {
		op = OpWrite
	}
	end := off + int64(len(p))
	for pos := off; pos < end; {
		if pos%bs == 0 && (end-pos >= bs || end == size) {
			m := end - pos
			if end != size {
				m -= m % bs
			}
			if _, err := cl.do(Request{Op: op, Off: pos, Buf: p[pos-off : pos-off+m]}); err != nil {
				return err
			}
			pos += m
			continue
		}
		n, err := cl.partial(p[pos-off:end-off], pos, write)
		if err != nil {
			return err
		}
		pos += n
	}
	return nil
}

// partial handles the block around pos: read it whole, then copy out (a
// read) or patch and write it back (a write). It returns the bytes of p
// done.
func (cl *Client) partial(p []byte, pos int64, write bool) (int64, error) {
	bs := int64(cl.info.BlockSize.Min)
	bstart := pos - pos%bs
	bend := bstart + bs
	if bend > cl.info.Size {
		bend = cl.info.Size
	}
	blk := make([]byte, bend-bstart)
	if _, err := cl.do(Request{Op: OpRead, Off: bstart, Buf: blk}); err != nil {
		return 0, err
	}
	var n int64
	if write {
		n = int64(copy(blk[pos-bstart:], p))
		_, err := cl.do(Request{Op: OpWrite, Off: bstart, Buf: blk})
		return n, err
	}
	return int64(copy(p, blk[pos-bstart:])), nil
}

// Zero makes length bytes at off read back as zeroes: NBD_CMD_WRITE_ZEROES
// for whole blocks (with flags: NoHole, FastZero, FUA), read-modify-write
// for partial blocks at the edges. A server without WRITE_ZEROES gets
// plain writes of zeroes, unless FastZero was asked, which then fails with
// EOPNOTSUPP as a slow zero would.
func (cl *Client) Zero(off, length int64, flags ReqFlags) error {
	req := Request{Op: OpZero, Off: off, Len: length, Flags: flags}
	if off < 0 || length < 0 || length > cl.info.Size-off {
		return cl.refuse(req, syscall.EINVAL, "range outside the export")
	}
	if !cl.info.CanZero() && flags&FastZero != 0 {
		return cl.refuse(req, syscall.EOPNOTSUPP, "the server does not offer write zeroes, so no fast zero")
	}
	head, mid, tail := cl.inner(off, length)
	if err := cl.writeZeroes(off, head-off); err != nil {
		return err
	}
	if mid > head {
		req.Off, req.Len = head, mid-head
		var err error
		if cl.info.CanZero() {
			_, err = cl.do(req)
		} else {
			err = cl.writeZeroes(head, mid-head)
		}
		if err != nil {
			return err
		}
	}
	return cl.writeZeroes(mid, tail-mid)
}

// inner splits [off, off+length) into an unaligned head [off, head), the
// aligned middle [head, mid) and an unaligned tail [mid, tail). A range
// that ends at the export's end counts as aligned there.
func (cl *Client) inner(off, length int64) (head, mid, tail int64) {
	bs, end := int64(cl.info.BlockSize.Min), off+length
	head = (off + bs - 1) / bs * bs
	mid = end
	if end != cl.info.Size {
		mid = end / bs * bs
	}
	if head >= mid {
		return end, end, end // inside one block: all of it is the head
	}
	return head, mid, end
}

// writeZeroes writes zero bytes with plain writes.
func (cl *Client) writeZeroes(off, n int64) error {
	if n <= 0 {
		return nil
	}
	buf := make([]byte, min(n, int64(cl.info.BlockSize.Max)))
	for n > 0 {
		m := min(n, int64(len(buf)))
		if _, err := cl.WriteAt(buf[:m], off); err != nil {
			return err
		}
		off, n = off+m, n-m
	}
	return nil
}

// Trim tells the server it may discard the whole blocks inside
// [off, off+length); partial blocks at the edges are left alone, as trim
// is only a hint. Afterwards the range's content is undefined until
// written again.
func (cl *Client) Trim(off, length int64) error {
	req := Request{Op: OpTrim, Off: off, Len: length}
	if off < 0 || length < 0 || length > cl.info.Size-off {
		return cl.refuse(req, syscall.EINVAL, "range outside the export")
	}
	head, mid, _ := cl.inner(off, length)
	if mid <= head {
		return nil
	}
	req.Off, req.Len = head, mid-head
	_, err := cl.do(req)
	return err
}

// Flush makes every write that already completed durable (NBD_CMD_FLUSH).
// With several connections, it covers the writes of all of them
// (CAN_MULTI_CONN promises that), provided they completed before Flush was
// called. It fails with EOPNOTSUPP when the server does not offer flush;
// only a successful Flush makes a written export count as synced.
func (cl *Client) Flush() error {
	_, err := cl.do(Request{Op: OpFlush})
	return err
}
