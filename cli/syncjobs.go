package cli

import (
	"fmt"

	"github.com/ringcp/ringcp/syncproto"
)

// ringcp sync --jobs FILE runs every line of the list as a sync between
// ends on this host, in one batch (the same list as a copy's: "SRC DST"
// and the range flags, which a sync refuses). A line with an ssh:// end
// is refused before anything is read or written: a sync across hosts
// runs one at a time, over its own ssh session (ringcp sync SRC
// ssh://host/DST), and copier would otherwise take "ssh://host/path" for
// a relative path. A copy's list refuses it the same way.

// remoteJobLines refuses a list with an ssh:// end.
func remoteJobLines(cfg config, list []jobLine) error {
	for _, j := range list {
		for _, end := range []string{j.src, j.dst} {
			if syncproto.IsRemote(end) {
				return fmt.Errorf("--jobs %s line %d: %s: a --jobs list takes ends on this host; run a sync with an ssh:// end on its own (ringcp sync SRC ssh://host/DST)", cfg.jobs, j.line, end)
			}
		}
	}
	return nil
}
