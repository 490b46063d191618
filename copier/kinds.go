package copier

import (
	"fmt"
	"strings"
	"sync"
)

// The kinds of end, by how an operand is recognized: a URI scheme
// ("nbd", "nbds+unix"), the stream operand "-", or a path (what no other
// kind claims). A kind registers itself from its own file's init; adding
// a kind is its files and that one call.

// Operand keys a kind registers under besides its URI schemes.
const (
	pathOperand   = ""  // a path: what no other kind claims
	streamOperand = "-" // the standard input or output
)

// endKind is one kind of end.
type endKind struct {
	// name names the kind in messages and panics ("file", "nbd").
	name string
	// inspect looks at operand as SRC or DST of p (r), changing nothing,
	// and returns the end, or a *RefusedError. It fills in the
	// endpoint's common fields (path, role, exists, geo, the endFacts)
	// and its end. An end it opened (a connection) is closed by
	// end.close, also when Prepare refuses the copy later.
	inspect func(p *Plan, operand string, r role) (*endpoint, error)
}

var kinds struct {
	sync.Mutex
	by map[string]endKind // by scheme (lower case), streamOperand or pathOperand
}

// registerKind adds kind k under each key: a URI scheme (without "://",
// matched without regard to case), streamOperand, or pathOperand. A key
// registered twice panics.
func registerKind(k endKind, keys ...string) {
	kinds.Lock()
	defer kinds.Unlock()
	if kinds.by == nil {
		kinds.by = map[string]endKind{}
	}
	for _, key := range keys {
		key = strings.ToLower(key)
		if o, ok := kinds.by[key]; ok {
			panic(fmt.Sprintf("copier: %q is claimed by the kinds %s and %s", key, o.name, k.name))
		}
		kinds.by[key] = k
	}
}

// kindOf is the kind of end operand is: the kind of its URI scheme, of
// "-", or of paths. A scheme no kind has is a path's (a file may be named
// "x://y"); "-" without a kind of its own is not a path either (ok false).
func kindOf(operand string) (endKind, bool) {
	kinds.Lock()
	defer kinds.Unlock()
	if operand == streamOperand {
		k, ok := kinds.by[streamOperand]
		return k, ok
	}
	if scheme, _, ok := strings.Cut(operand, "://"); ok {
		if k, ok := kinds.by[strings.ToLower(scheme)]; ok {
			return k, true
		}
	}
	k, ok := kinds.by[pathOperand]
	return k, ok
}

// hasKind says some kind takes operand: any path does (the file kind's,
// on Linux); "-" only once a kind of stream is registered.
func hasKind(operand string) bool {
	if operand != streamOperand {
		return true
	}
	_, ok := kindOf(operand)
	return ok
}
