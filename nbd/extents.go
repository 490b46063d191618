package nbd

import "syscall"

// Extent is a run of the export with one allocation status
// (base:allocation). Zero means the bytes read as zeroes: a copy may skip
// reading them. Hole means they are not allocated; a hole without Zero
// has undefined content and must still be read and copied as it reads.
type Extent struct {
	Off  int64
	Len  int64
	Hole bool // NBD_STATE_HOLE
	Zero bool // NBD_STATE_ZERO
}

// Extents maps [off, off+length) with NBD_CMD_BLOCK_STATUS, like
// SEEK_DATA/SEEK_HOLE on a file: the extents are consecutive, cover the
// range exactly, and neighbours with the same status are merged. A server
// without base:allocation yields one data extent (Hole and Zero false),
// which is always a safe answer.
func (cl *Client) Extents(off, length int64) ([]Extent, error) {
	req := Request{Op: opBlockStatus, Off: off, Len: length}
	if off < 0 || length < 0 || length > cl.info.Size-off {
		return nil, cl.refuse(req, syscall.EINVAL, "range outside the export")
	}
	if length == 0 {
		return nil, nil
	}
	if !cl.info.BlockStatus {
		return []Extent{{Off: off, Len: length}}, nil
	}
	var out []Extent
	err := cl.walk(ctxAllocation, req, func(off, n int64, flags uint32) {
		appendExtent(&out, Extent{Off: off, Len: n, Hole: flags&stateHole != 0, Zero: flags&stateZero != 0})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// walk maps req's range through context k with as many block status
// requests as it takes, handing each piece of it, clipped to the range,
// to add in order. The pieces are consecutive and cover the range.
func (cl *Client) walk(k int, req Request, add func(off, n int64, flags uint32)) error {
	for pos, end := req.Off, req.Off+req.Len; pos < end; {
		next, err := cl.status(k, pos, end, add)
		if err != nil {
			return err
		}
		if next <= pos {
			return &Error{Op: req.Op.String(), URI: cl.addr.URI, Offset: pos, Length: end - pos, Errno: syscall.EPROTO,
				Err: protoErrorf("block status made no progress at offset %d", pos)}
		}
		pos = next
	}
	return nil
}

// status asks about [pos, end), widened to whole minimum blocks, hands
// what context k says of it, clipped to [pos, end), to add, and returns
// where that stopped. The other contexts' chunks of the same reply may
// cover more or less (the spec allows it); they are not used here.
func (cl *Client) status(k int, pos, end int64, add func(off, n int64, flags uint32)) (int64, error) {
	bs, size := int64(cl.info.BlockSize.Min), cl.info.Size
	start := pos - pos%bs
	stop := min(end+(bs-end%bs)%bs, size)
	stop = min(stop, start+maxEffectCap)
	all, err := cl.blockStatus(start, stop-start)
	if err != nil {
		return 0, err
	}
	at := start
	for _, e := range all[k] {
		s, t := max(at, pos), min(at+int64(e.length), end)
		if t > s {
			add(s, t-s, e.flags)
		}
		at += int64(e.length)
		if at >= end {
			break
		}
	}
	return min(at, end), nil
}

func (cl *Client) blockStatus(off, n int64) ([numContexts][]statusExtent, error) {
	ch := make(chan Completion, 1)
	req := Request{Op: opBlockStatus, Off: off, Len: n}
	if err := cl.start(req, ch); err != nil {
		return [numContexts][]statusExtent{}, err
	}
	c := <-ch
	return c.status, c.Err
}

// appendExtent appends e, merging it into the last extent when they touch
// and share a status.
func appendExtent(out *[]Extent, e Extent) {
	if k := len(*out) - 1; k >= 0 {
		l := &(*out)[k]
		if l.Off+l.Len == e.Off && l.Hole == e.Hole && l.Zero == e.Zero {
			l.Len += e.Len
			return
		}
	}
	*out = append(*out, e)
}
