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
	for pos, end := off, off+length; pos < end; {
		next, err := cl.status(pos, end, &out)
		if err != nil {
			return nil, err
		}
		if next <= pos {
			return nil, &Error{Op: req.Op.String(), URI: cl.addr.URI, Offset: pos, Length: end - pos, Errno: syscall.EPROTO,
				Err: protoErrorf("block status made no progress at offset %d", pos)}
		}
		pos = next
	}
	return out, nil
}

// status asks about [pos, end), widened to whole minimum blocks, appends
// what came back clipped to [pos, end), and returns where it stopped.
func (cl *Client) status(pos, end int64, out *[]Extent) (int64, error) {
	bs, size := int64(cl.info.BlockSize.Min), cl.info.Size
	start := pos - pos%bs
	stop := min(end+(bs-end%bs)%bs, size)
	stop = min(stop, start+maxEffectCap)
	o, err := cl.blockStatus(start, stop-start)
	if err != nil {
		return 0, err
	}
	at := start
	for _, e := range o {
		s, t := max(at, pos), min(at+int64(e.length), end)
		if t > s {
			appendExtent(out, Extent{Off: s, Len: t - s, Hole: e.flags&stateHole != 0, Zero: e.flags&stateZero != 0})
		}
		at += int64(e.length)
		if at >= end {
			break
		}
	}
	return min(at, end), nil
}

func (cl *Client) blockStatus(off, n int64) ([]statusExtent, error) {
	ch := make(chan Completion, 1)
	req := Request{Op: opBlockStatus, Off: off, Len: n}
	if err := cl.start(req, ch); err != nil {
		return nil, err
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
