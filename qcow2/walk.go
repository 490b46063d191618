package qcow2

import "fmt"

// L1 and L2 entry bits.
const (
	entryOffsetMask = 0x00fffffffffffe00 // bits 9-55: a host offset
	entryCopied     = 1 << 63            // refcount is exactly 1
	entryCompressed = 1 << 62
	entryZero       = 1 << 0 // standard L2 entries only
)

// runKind is what a run of guest bytes is in one image (not its chain).
type runKind uint8

const (
	runUnalloc    runKind = iota // read from the backing file, else zeros
	runZero                      // reads as zeros
	runData                      // at host offset host of the data file
	runCompressed                // one compressed cluster, descriptor desc
)

// run is a stretch of guest bytes [off, off+n) of one kind; neighbours of
// one kind are merged, and data runs only where their host bytes follow
// on (so a data run is one host read). A compressed run is one cluster or
// part of it.
type run struct {
	off, n int64
	kind   runKind
	host   int64  // runData: the host offset of off
	desc   uint64 // runCompressed: the L2 entry
}

// runs calls fn with the runs of [off, end) in order until fn says stop.
func (im *Image) runs(off, end int64, fn func(run) (more bool, err error)) error {
	var cur run
	have, more := false, true
	emit := func(r run) error {
		if have && cur.kind == r.kind && cur.off+cur.n == r.off && r.kind != runCompressed &&
			(r.kind != runData || cur.host+cur.n == r.host) {
			cur.n += r.n
			return nil
		}
		if have {
			var err error
			if more, err = fn(cur); err != nil {
				return err
			}
		}
		cur, have = r, true
		return nil
	}
	span := im.cs * im.l2n // guest bytes one L2 table maps
	for off < end && more {
		l1i := off / span
		spanEnd := min((l1i+1)*span, end)
		tab, err := im.l2Table(l1i)
		if err != nil {
			return err
		}
		if tab == nil {
			if err := emit(run{off: off, n: spanEnd - off}); err != nil {
				return err
			}
			off = spanEnd
			continue
		}
		for off < spanEnd && more {
			cEnd := min(off-off%im.cs+im.cs, spanEnd)
			i := (off % span) / im.cs * im.entryWords()
			var bitmap uint64
			if im.extended {
				bitmap = tab[i+1]
			}
			if err := im.clusterRuns(off, cEnd, tab[i], bitmap, emit); err != nil {
				return err
			}
			off = cEnd
		}
	}
	if have && more {
		_, err := fn(cur)
		return err
	}
	return nil
}

// clusterRuns emits the runs of [off, end), inside one cluster whose L2
// entry is e (and subcluster bitmap, with extended L2 entries).
func (im *Image) clusterRuns(off, end int64, e, bitmap uint64, emit func(run) error) error {
	start := off - off%im.cs // the cluster's guest offset
	if e&entryCompressed != 0 {
		if err := im.checkCompressed(start, e); err != nil {
			return err
		}
		return emit(run{off: off, n: end - off, kind: runCompressed, desc: e})
	}
	host := int64(e & entryOffsetMask)
	allocated := host != 0 || im.extData && e&entryCopied != 0
	if allocated {
		if err := im.checkHost(start, host); err != nil {
			return err
		}
	}
	if !im.extended {
		switch {
		case e&entryZero != 0:
			return emit(run{off: off, n: end - off, kind: runZero})
		case !allocated:
			return emit(run{off: off, n: end - off})
		}
		return emit(run{off: off, n: end - off, kind: runData, host: host + off - start})
	}
	return im.subclusterRuns(off, end, start, host, allocated, bitmap, emit)
}

// subclusterRuns emits the runs of a cluster with an extended L2 entry:
// bit i of the bitmap says subcluster i is allocated, bit 32+i that it
// reads as zeros.
func (im *Image) subclusterRuns(off, end, start, host int64, allocated bool, bitmap uint64, emit func(run) error) error {
	alloc, zero := uint32(bitmap), uint32(bitmap>>32)
	if alloc&zero != 0 || !allocated && alloc != 0 {
		return malformed(im.name, "L2 entry of guest offset %#x has an invalid subcluster bitmap %#x", start, bitmap)
	}
	scs := int64(1) << im.scBits
	for off < end {
		sc := (off - start) >> im.scBits
		scEnd := min(start+(sc+1)*scs, end)
		r := run{off: off, n: scEnd - off}
		switch {
		case zero&(1<<sc) != 0:
			r.kind = runZero
		case alloc&(1<<sc) != 0:
			r.kind, r.host = runData, host+off-start
		}
		if err := emit(r); err != nil {
			return err
		}
		off = scEnd
	}
	return nil
}

// l2Table is the L2 table of L1 entry l1i, or nil when it has none.
func (im *Image) l2Table(l1i int64) ([]uint64, error) {
	if l1i >= int64(len(im.l1)) {
		return nil, nil
	}
	off := im.l1[l1i] & entryOffsetMask
	if off == 0 {
		return nil, nil
	}
	if t := im.cache.get(off); t != nil {
		return t, nil
	}
	if err := im.checkTable("L2 table", l1i, off); err != nil {
		return nil, err
	}
	b := make([]byte, im.cs)
	if err := readFull(im.t, b, int64(off)); err != nil {
		return nil, err
	}
	t := decodeTable(b)
	im.cache.put(off, t)
	return t, nil
}

// checkTable checks that a table a table entry points to is
// cluster-aligned and inside the file.
func (im *Image) checkTable(what string, index int64, off uint64) error {
	if err := inFile(im.name, fmt.Sprintf("%s %d", what, index), off, uint64(im.cs), im.cs, im.fileSize); err != nil {
		return err
	}
	return nil
}

// checkHost checks a data cluster's host offset: aligned, and starting
// inside the data file (its tail may lie past the end, and reads as
// zeros, as QEMU reads it). An external data file is not bounded here:
// what it does not hold reads as zeros.
func (im *Image) checkHost(guest, host int64) error {
	if host%im.cs != 0 {
		return malformed(im.name, "data cluster of guest offset %#x at unaligned host offset %#x", guest, host)
	}
	if !im.extData && host >= im.fileSize {
		return malformed(im.name, "data cluster of guest offset %#x at host offset %#x, past the end of the file (%d bytes)",
			guest, host, im.fileSize)
	}
	return nil
}

// checkCompressed checks a compressed cluster's descriptor.
func (im *Image) checkCompressed(guest int64, e uint64) error {
	if im.extData {
		return malformed(im.name, "compressed cluster at guest offset %#x in an image with an external data file", guest)
	}
	coff, _ := im.compressedSpan(e)
	if coff == 0 || coff >= im.fileSize {
		return malformed(im.name, "compressed cluster of guest offset %#x at host offset %#x, outside the file (%d bytes)",
			guest, coff, im.fileSize)
	}
	return nil
}

// compressedSpan decodes a compressed cluster descriptor: the host
// offset of its data and how many bytes it may take (to the end of its
// last 512-byte sector).
func (im *Image) compressedSpan(e uint64) (off, n int64) {
	shift := 62 - (im.cbits - 8)
	off = int64(e & (1<<shift - 1))
	sectors := int64((e>>shift)&(1<<(im.cbits-8)-1)) + 1
	return off, sectors*512 - off%512
}
