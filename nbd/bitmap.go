package nbd

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Dirty bitmaps: QEMU tracks the blocks written since a point in time in
// a dirty bitmap (persistent in a qcow2: `qemu-img bitmap --add`), and
// its NBD server shows one as the metadata context
// qemu:dirty-bitmap:NAME (qemu's docs/interop/nbd.rst), whose single
// flag, bit 0, is set on dirty extents. Incremental backup and warm
// migration read only those.

// DirtyExtent is a run of the export that the dirty bitmap marks all
// dirty or all clean. The bitmap tracks whole granules (64 KiB by
// default in a qcow2), so a dirty extent covers every granule a write
// touched, whole; only the export's end may cut one short.
type DirtyExtent struct {
	Off   int64
	Len   int64
	Dirty bool // NBD_STATE_DIRTY
}

// ErrNoBitmap is matched by the error of Dial when the server does not
// offer the dirty bitmap Options.DirtyBitmap names (its errno is ENOENT);
// errors.As finds the *BitmapError with the details.
var ErrNoBitmap = errors.New("the server does not offer the dirty bitmap")

// BitmapError says why the dirty bitmap asked for cannot be read.
type BitmapError struct {
	Bitmap  string   // the name asked for
	Offered []string // the bitmaps the server lists instead (may be empty)
	Reason  string   // why, when not simply absent (no structured replies...)
}

func (e *BitmapError) Error() string {
	s := fmt.Sprintf("%v %q", ErrNoBitmap, e.Bitmap)
	switch {
	case e.Reason != "":
		s += ": " + e.Reason
	case len(e.Offered) > 0:
		s += "; it offers " + strings.Join(e.Offered, ", ")
	default:
		s += " (and lists no dirty bitmap: qemu-nbd shows one with -B NAME)"
	}
	return s
}

// Is makes errors.Is(err, ErrNoBitmap) and errors.Is(err, syscall.ENOENT)
// hold.
func (e *BitmapError) Is(target error) bool {
	return target == ErrNoBitmap || target == syscall.ENOENT
}

// DirtyExtents maps [off, off+length) through the dirty bitmap
// (Options.DirtyBitmap) with NBD_CMD_BLOCK_STATUS: the extents are
// consecutive, cover the range exactly, and neighbours of the same
// state are merged. It fails with EOPNOTSUPP on a client that selected
// no bitmap.
func (cl *Client) DirtyExtents(off, length int64) ([]DirtyExtent, error) {
	req := Request{Op: opBlockStatus, Off: off, Len: length}
	switch {
	case cl.info.DirtyBitmap == "":
		return nil, cl.refuse(req, syscall.EOPNOTSUPP, "no dirty bitmap was selected (Options.DirtyBitmap)")
	case off < 0 || length < 0 || length > cl.info.Size-off:
		return nil, cl.refuse(req, syscall.EINVAL, "range outside the export")
	case length == 0:
		return nil, nil
	}
	var out []DirtyExtent
	err := cl.walk(ctxBitmap, req, func(off, n int64, flags uint32) {
		appendDirty(&out, DirtyExtent{Off: off, Len: n, Dirty: flags&stateDirty != 0})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendDirty appends e, merging it into the last extent when they touch
// and share a state.
func appendDirty(out *[]DirtyExtent, e DirtyExtent) {
	if k := len(*out) - 1; k >= 0 {
		l := &(*out)[k]
		if l.Off+l.Len == e.Off && l.Dirty == e.Dirty {
			l.Len += e.Len
			return
		}
	}
	*out = append(*out, e)
}

// checkBitmap fails the handshake when the bitmap asked for was not
// selected, naming the bitmaps the server does offer.
func (h *handshake) checkBitmap() error {
	name := h.opt.DirtyBitmap
	if name == "" || h.out.contexts.has[ctxBitmap] {
		return nil
	}
	e := &BitmapError{Bitmap: name}
	if !h.out.structured {
		e.Reason = "the server did not agree to structured replies, which block status needs"
		if h.opt.NoStructuredReplies {
			e.Reason = "Options.NoStructuredReplies leaves no block status"
		}
		return e
	}
	offered, err := h.listBitmaps()
	if err != nil {
		return err
	}
	e.Offered = offered
	return e
}

// listBitmaps asks the server for every qemu:dirty-bitmap: context of the
// export (NBD_OPT_LIST_META_CONTEXT, which selects nothing). A server
// that cannot list yields none.
func (h *handshake) listBitmaps() ([]string, error) {
	if err := h.send(optListMetaContext, metaData(h.name, metaContextBitmap)); err != nil {
		return nil, err
	}
	var names []string
	for {
		r, p, err := h.reply(optListMetaContext)
		if err != nil {
			return nil, err
		}
		switch {
		case r.typ == repAck:
			return names, nil
		case r.typ == repMetaContext:
			_, name, err := parseMetaContext(p)
			if err != nil {
				return nil, err
			}
			if b, ok := strings.CutPrefix(name, metaContextBitmap); ok && len(names) < 64 {
				names = append(names, b)
			}
		case r.typ&repFlagError != 0:
			return nil, fatalOptError(r, string(p))
		default:
			return nil, protoErrorf("reply type 0x%x to NBD_OPT_LIST_META_CONTEXT", r.typ)
		}
	}
}
