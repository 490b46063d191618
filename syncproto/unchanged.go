package syncproto

import (
	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
)

// A SRC written while the sync reads it gives DST a mix of its old and
// new content, as it does a copy (copier.SrcChangedError). The side that
// holds SRC checks, once it read all of it and before it sends the end,
// that SRC is as it was when opened; otherwise it fails the session,
// and the target neither names a new DST nor says DST is synced. A
// push's client asks its Source (Watched: the ringcp command's SRC is
// read by the engine, whose read pass makes the check); a pull's server
// watches the file it opened (copier.WatchFile). The error crosses the
// wire as itself (errSrcChanged), so that the client names the file.

// Watched is a Source that can say, once all of it was read, whether
// it changed while it was read: nil, or the *copier.SrcChangedError
// that says how.
type Watched interface {
	Unchanged() error
}

// unchangedOf is src's check, or nil when it keeps none.
func unchangedOf(src blocksync.Source) func() error {
	if w, ok := src.(Watched); ok {
		return w.Unchanged
	}
	return nil
}

// watchServed is the check of the SRC a server opened, recorded now,
// before the first read.
func watchServed(src *blocksync.File, path string) (func() error, error) {
	return copier.WatchFile(src.Descriptor(), path, src.Size())
}
