package copier

import (
	"github.com/ringcp/ringcp/extents"
)

// OnlyChanged restricts a copy to what changed since an earlier one.
// Extents and DirtyBitmap copy only some ranges of SRC (at the same
// offsets in DST, whose other bytes are kept); Sync copies only the
// granules where DST differs from SRC.
type OnlyChanged struct {
	// Extents, with ExtentsSet, are the only ranges copied: offsets in
	// SRC and, the same, in DST (extents.Parse's entries, so that a
	// range past an end is refused by its line). Overlapping and
	// unsorted ranges merge; an empty list copies nothing. DST must
	// exist. Ranges are widened to whole O_DIRECT units of both ends
	// (512 or 4096 bytes) where they are not aligned: those few bytes
	// around a range are copied from SRC too.
	Extents    []extents.Entry
	ExtentsSet bool
	// DirtyBitmap, on an NBD SRC, copies only the extents its dirty
	// bitmap marks dirty (the qemu:dirty-bitmap:NAME meta context, as
	// qemu-nbd -B NAME and qemu-storage-daemon offer it); within Extents
	// when both are set. A server that does not offer it is a refusal
	// that names it.
	DirtyBitmap string
	// Sync makes DST equal to SRC by writing only the granules that
	// differ: both ends are read through the engine (SRC and DST of each
	// chunk into one slot), compared per SyncGranule, and only differing
	// granules written; granules that are zeros in SRC are made zero in
	// DST as a copy makes zero runs (punched where DST can). A regular
	// file DST gets SRC's size; a device DST keeps its own and must hold
	// SRC. A DST that does not exist yet is simply copied. The copy is
	// in place: a sync that fails or is stopped leaves DST a mix of old
	// and new granules (Report.DstState DstMixed), never named complete.
	Sync bool
	// SyncGranule is the unit compared and written (DefaultSyncGranule
	// when 0): a power of two from 4 KiB to 64 KiB, so a changed 4 KiB
	// costs at most one granule; raised to the ends' O_DIRECT unit.
	SyncGranule int
}

// DefaultSyncGranule is blocksync's default: a qcow2 cluster, and the
// granule of its dirty bitmaps.
const DefaultSyncGranule = 64 << 10

// SyncReport is what a sync or a restricted copy did beyond a copy's
// Report.
type SyncReport struct {
	// Ranges is how many ranges a restricted copy (Extents,
	// DirtyBitmap) copied, RangeBytes the bytes in them.
	Ranges     int   `json:"ranges"`
	RangeBytes int64 `json:"range_bytes"`
	// BytesReadDst is what a sync read of DST to compare;
	// GranulesChanged how many granules it wrote or zeroed, of Granules.
	BytesReadDst    int64 `json:"bytes_read_dst"`
	GranulesChanged int64 `json:"granules_changed"`
	Granules        int64 `json:"granules"`
}

// restricted: the copy is limited to some ranges.
func (o *Options) restricted() bool { return o.ExtentsSet || o.DirtyBitmap != "" }
