package qcow2

import "encoding/binary"

// header encodes the first cluster: the version 3 header (112 bytes, with
// the compression type), the backing format extension, the end of the
// extensions, and the backing file name.
func (w *Writer) header(lay *layout) []byte {
	b := make([]byte, w.cs)
	be := binary.BigEndian
	be.PutUint32(b[0:], magic)
	be.PutUint32(b[4:], 3)
	be.PutUint32(b[20:], uint32(w.cbits))
	be.PutUint64(b[24:], uint64(w.size))
	be.PutUint32(b[36:], uint32(len(lay.l1)))
	be.PutUint64(b[40:], uint64(lay.l1Off))
	be.PutUint64(b[48:], uint64(lay.tableOff))
	be.PutUint32(b[56:], uint32(lay.tableCl))
	var incompat uint64
	if w.opt.Compression == CompressZstd {
		incompat |= incompatCompression
		b[headerV3Min] = compressZstd
	}
	be.PutUint64(b[72:], incompat)
	be.PutUint32(b[96:], 4) // refcount_order: 16-bit refcounts
	be.PutUint32(b[100:], headerV3Len)
	off := headerV3Len
	if w.opt.BackingFormat != "" {
		off = putExtension(b, off, extBackingFormat, []byte(w.opt.BackingFormat))
	}
	off = putExtension(b, off, extEnd, nil)
	if name := w.opt.BackingFile; name != "" {
		be.PutUint64(b[8:], uint64(off))
		be.PutUint32(b[16:], uint32(len(name)))
		copy(b[off:], name)
	}
	return b
}

// putExtension writes a header extension at off, padded to 8 bytes, and
// returns where the next one goes.
func putExtension(b []byte, off int, typ uint32, data []byte) int {
	binary.BigEndian.PutUint32(b[off:], typ)
	binary.BigEndian.PutUint32(b[off+4:], uint32(len(data)))
	copy(b[off+8:], data)
	return off + 8 + (len(data)+7)&^7
}
