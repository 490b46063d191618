package qcow2

import (
	"fmt"
	"sort"
)

// checkStats is what the metadata check counted, for Info.
type checkStats struct {
	dataBytes       int64 // guest bytes stored in this image (data, compressed)
	compressedBytes int64 // of which compressed, guest bytes
	zeroBytes       int64 // guest bytes of zero clusters and subclusters
}

// extent of host bytes that metadata occupies.
type hostRange struct {
	off, end int64
	what     string
}

// check reads all the active metadata once, as qemu-img check would, and
// refuses an image whose tables lie outside the file or overlap, or whose
// L2 entries point outside the file or into the metadata. It reads the
// refcount table and the L2 tables through a bounded buffer: memory stays
// in proportion to the file.
func (im *Image) check() error {
	meta, err := im.metadata()
	if err != nil {
		return err
	}
	if err := overlaps(im.name, meta); err != nil {
		return err
	}
	st := &checkStats{}
	err = im.runs(0, im.size, func(r run) (bool, error) {
		switch r.kind {
		case runData:
			st.dataBytes += r.n
			if !im.extData {
				return true, im.checkNotMeta(meta, r.off, r.host, r.host+r.n)
			}
		case runCompressed:
			st.dataBytes += r.n
			st.compressedBytes += r.n
			coff, cn := im.compressedSpan(r.desc)
			return true, im.checkNotMeta(meta, r.off, coff, min(coff+cn, im.fileSize))
		case runZero:
			st.zeroBytes += r.n
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	im.stats = st
	return nil
}

// metadata lists the host ranges of the header, the L1 table, the L2
// tables, the refcount table and blocks, each checked to lie in the file.
func (im *Image) metadata() ([]hostRange, error) {
	h := im.h
	meta := []hostRange{{0, im.cs, "header"}}
	if h.L1Size > 0 {
		meta = append(meta, hostRange{int64(h.L1TableOffset), int64(h.L1TableOffset) + int64(h.L1Size)*8, "L1 table"})
	}
	for i, e := range im.l1 {
		if off := e & entryOffsetMask; off != 0 {
			if err := im.checkTable("L2 table of L1 entry", int64(i), off); err != nil {
				return nil, err
			}
			meta = append(meta, hostRange{int64(off), int64(off) + im.cs, fmt.Sprintf("L2 table %d", i)})
		}
	}
	rt := int64(h.RefTableOffset)
	rtLen := int64(h.RefTableClusters) * im.cs
	meta = append(meta, hostRange{rt, rt + rtLen, "refcount table"})
	b := make([]byte, rtLen) // at most 8 MiB, inside the file (parseHeader)
	if err := readFull(im.t, b, rt); err != nil {
		return nil, &Error{Name: im.name, Cause: ErrMalformed, What: "refcount table unreadable", Err: err}
	}
	for i, e := range decodeTable(b) {
		off := e &^ 0x1ff // bits 9-63
		if off == 0 {
			continue
		}
		if err := im.checkTable("refcount block", int64(i), off); err != nil {
			return nil, err
		}
		meta = append(meta, hostRange{int64(off), int64(off) + im.cs, fmt.Sprintf("refcount block %d", i)})
	}
	sort.Slice(meta, func(i, j int) bool { return meta[i].off < meta[j].off })
	return meta, nil
}

// overlaps refuses metadata that two tables claim.
func overlaps(name string, meta []hostRange) error {
	for i := 1; i < len(meta); i++ {
		if meta[i].off < meta[i-1].end {
			return malformed(name, "%s at %#x overlaps %s at %#x", meta[i].what, meta[i].off, meta[i-1].what, meta[i-1].off)
		}
	}
	return nil
}

// checkNotMeta refuses data at host [off, end) over the metadata (sorted
// by offset).
func (im *Image) checkNotMeta(meta []hostRange, guest, off, end int64) error {
	i := sort.Search(len(meta), func(i int) bool { return meta[i].end > off })
	if i < len(meta) && meta[i].off < end {
		return malformed(im.name, "data of guest offset %#x at host offset %#x overlaps the %s at %#x",
			guest, off, meta[i].what, meta[i].off)
	}
	return nil
}
