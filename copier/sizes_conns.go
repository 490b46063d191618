package copier

import (
	"fmt"
	"strings"
)

// The queue depth of a SRC read over connections (an HTTP or S3 object
// in parallel ranges, a qcow2 image over one): each request the engine
// has in flight is one range request, on a connection of its own, so
// the depth follows the connections (Options.Web.Connections, whose
// default httpobj's BenchmarkRangedRead chose with 8 MiB ranges, the
// copy's default block). More requests than connections would only wait
// in the HTTP client's queue for a connection, holding a buffer each,
// and their latency would read as a queue to the good neighbour;
// fewer would leave connections idle. A depth given (Options.QueueDepth)
// is kept.

// depthWanted is the depth asked of align.Choose: the caller's, else one
// per connection, else none (Choose's default).
func (in sizing) depthWanted() int {
	if in.askDepth == 0 && in.conns > 0 {
		return in.conns
	}
	return in.askDepth
}

// sayConns rewords Choose's line on the depth when it came from the
// connections rather than from the caller.
func (s *sizes) sayConns(in sizing) {
	if in.askDepth != 0 || in.conns <= 0 {
		return
	}
	given := fmt.Sprintf("queue depth %d: given", in.conns)
	for i, line := range s.why {
		if strings.HasPrefix(line, given) {
			s.why[i] = fmt.Sprintf("queue depth %d: one range request in flight per connection to SRC (%d connections, Options.Web.Connections)%s",
				in.conns, in.conns, strings.TrimPrefix(line, given))
		}
	}
}
