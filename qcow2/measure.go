package qcow2

// Mapper is a disk that tells where its data is: an *Image, or a raw
// file's engine.Endpoint.
type Mapper interface {
	Size() int64
	Data(off, end int64) (start, stop int64, err error)
}

// Measurement is what qemu-img measure -O qcow2 says a new image holding
// a disk takes: Required with only its data clusters, FullyAllocated with
// every cluster.
type Measurement struct {
	Required       int64
	FullyAllocated int64
}

// Measure sizes a new image (no backing file, refcount_bits 16, standard
// L2 entries) of cluster size cs holding src, as qemu-img measure does:
// the clusters of cs that hold any of src's data, plus the metadata of a
// fully allocated image. A Writer never makes a larger file than Required
// (compressed, it makes a smaller one).
func Measure(src Mapper, cs int64) (Measurement, error) {
	if cs == 0 {
		cs = 64 << 10
	}
	virtual := ceilDiv(src.Size(), cs) * cs
	var required int64
	last := int64(-1) // the last cluster counted
	for off := int64(0); off < src.Size(); {
		start, stop, err := src.Data(off, src.Size())
		if err != nil {
			return Measurement{}, err
		}
		if start >= stop {
			if stop <= off {
				break
			}
			off = stop
			continue
		}
		first := max(start/cs, last+1)
		end := (stop - 1) / cs
		if end >= first {
			required += (end - first + 1) * cs
			last = end
		}
		off = stop
	}
	full := preallocSize(virtual, cs)
	return Measurement{Required: full - virtual + required, FullyAllocated: full}, nil
}

// preallocSize is QEMU's qcow2_calc_prealloc_size: the header, every L2
// and L1 table and every cluster, and the refcounts of all of them.
func preallocSize(virtual, cs int64) int64 {
	meta := cs // the header
	l2e := roundUp(virtual/cs, cs/8)
	meta += l2e * 8
	l1e := roundUp(l2e*8/cs, cs/8)
	meta += l1e * 8
	meta += refcountMetaSize((meta+virtual)/cs, cs)
	return meta + virtual
}

// refcountMetaSize is QEMU's qcow2_refcount_metadata_size for 16-bit
// refcounts: the refcount blocks and table that count clusters clusters
// and themselves.
func refcountMetaSize(clusters, cs int64) int64 {
	perTable, perBlock := cs/8, cs/2
	var table, blocks, n int64
	for {
		last := n
		blocks = ceilDiv(clusters+table+blocks, perBlock)
		table = ceilDiv(blocks, perTable)
		n = clusters + blocks + table
		if n == last {
			return (blocks + table) * cs
		}
	}
}

func roundUp(n, m int64) int64 { return ceilDiv(n, m) * m }
