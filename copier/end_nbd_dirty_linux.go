package copier

import (
	"github.com/ringcp/ringcp/extents"
)

// dirty is the export's dirty extents (Options.DirtyBitmap, selected when
// Prepare connected) across its first size bytes, as a list.
func (e *exportEnd) dirty(size int64) (extents.List, error) {
	all, err := e.x.Client().DirtyExtents(0, size)
	if err != nil {
		return nil, err
	}
	var out []extents.Range
	for _, d := range all {
		if d.Dirty {
			out = append(out, extents.Range{Off: d.Off, Len: d.Len})
		}
	}
	return extents.Merge(out), nil
}

// isExport: the end is an NBD export.
func isExport(ep *endpoint) bool {
	_, ok := ep.end.(*exportEnd)
	return ok
}
