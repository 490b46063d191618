package engine

import (
	"errors"
	"fmt"

	"github.com/ringcp/ringcp/ring"
	"sort"
	"sync"
)

// Capability is a flag of a backend that the engine's callers act on.
type Capability uint32

const (
	// NeedsHonestShortIO: the backend trusts the kernel to report a short
	// or failed read or write as such. io_uring retries a short request
	// itself at the file position, and some filesystems (FUSE with
	// FOPEN_DIRECT_IO) do not move it: copier then refuses the backend
	// for files there, or falls back.
	NeedsHonestShortIO Capability = 1 << iota
	// WorksEverywhere: the backend runs on any Linux and any file a
	// descriptor can read and write (pread/pwrite). "auto" falls back to
	// the first such backend.
	WorksEverywhere
	// AnyEnd: the backend also moves data for ends that are not
	// descriptors (Job.Ends: an IOEnd, such as an NBD export). Backends
	// without it take descriptors only, and refuse other ends
	// (Setup.DescriptorsOnly).
	AnyEnd
)

// BackendInfo describes a backend the engine can run a copy on.
type BackendInfo struct {
	// Name is what a caller chooses it by (ringcp --engine NAME).
	Name string
	// Preference orders "auto": the lowest available one is used.
	Preference int
	Caps       Capability
	New        NewBackend
	// Available says, without side effects that last, whether the backend
	// can run here; nil when it can. An error matching ErrUnavailable
	// means "fall back to another"; any other error is a failure.
	Available func() error
}

// ErrUnavailable marks a backend that cannot run here (the kernel lacks
// it, or it is switched off): "fall back to another". It is
// ring.ErrUnavailable, so that io_uring's reasons match as they are; other
// backends wrap it.
var ErrUnavailable = ring.ErrUnavailable

var registry struct {
	sync.Mutex
	list []BackendInfo
}

// Register adds a backend; packages register theirs in init (package
// fallback registers the pool). A name registered twice panics.
func Register(b BackendInfo) {
	registry.Lock()
	defer registry.Unlock()
	for _, o := range registry.list {
		if o.Name == b.Name {
			panic(fmt.Sprintf("engine: backend %q registered twice", b.Name))
		}
	}
	registry.list = append(registry.list, b)
	sort.SliceStable(registry.list, func(i, j int) bool { return registry.list[i].Preference < registry.list[j].Preference })
}

// Backends lists the registered backends, most preferred first.
func Backends() []BackendInfo {
	registry.Lock()
	defer registry.Unlock()
	return append([]BackendInfo(nil), registry.list...)
}

// BackendNames are the names a caller may choose, most preferred first.
func BackendNames() []string {
	var names []string
	for _, b := range Backends() {
		names = append(names, b.Name)
	}
	return names
}

// LookupBackend finds a backend by name.
func LookupBackend(name string) (BackendInfo, bool) {
	for _, b := range Backends() {
		if b.Name == name {
			return b, true
		}
	}
	return BackendInfo{}, false
}

// Unavailable reports whether err says a backend cannot run here.
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }
