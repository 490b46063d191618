package copier

import "github.com/ringcp/ringcp/extents"

// changedPlan is what Prepare decided for OnlyChanged.
type changedPlan struct {
	restricted bool
	ranges     extents.List // a restricted copy's ranges, as given (not yet aligned)
	syncing    bool         // Options.Sync over an existing DST
	granule    int
}

// DefaultSyncGranule is blocksync's default: the 4 KiB block guests and
// filesystems write, so that a sync writes the blocks that changed and
// not the larger granules around them (see blocksync.DefaultGranule).
const DefaultSyncGranule = 4 << 10

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
