package blkcg

import (
	"fmt"
	"strings"

	"github.com/ringcp/ringcp/internal/units"
)

// Limit is what the cgroups allow on one disk. A figure of 0 is no limit.
type Limit struct {
	ReadBPS, WriteBPS   uint64 // bytes per second
	ReadIOPS, WriteIOPS uint64 // requests per second, each part of a split request counted
	// Files are the files that set a limit, for messages.
	Files []string
}

// Any says a limit is set.
func (l Limit) Any() bool {
	return l.ReadBPS|l.WriteBPS|l.ReadIOPS|l.WriteIOPS != 0
}

// String says the limits set: "write 100 MiB/s, read 500 IOPS".
func (l Limit) String() string {
	var parts []string
	for _, f := range []struct {
		what string
		v    uint64
		iops bool
	}{{"read", l.ReadBPS, false}, {"write", l.WriteBPS, false}, {"read", l.ReadIOPS, true}, {"write", l.WriteIOPS, true}} {
		switch {
		case f.v == 0:
		case f.iops:
			parts = append(parts, fmt.Sprintf("%s %d IOPS", f.what, f.v))
		default:
			parts = append(parts, fmt.Sprintf("%s %s/s", f.what, units.Format(int64(min(f.v, 1<<62)))))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// field is figure i in the order ReadBPS, WriteBPS, ReadIOPS, WriteIOPS.
func (l *Limit) field(i int) *uint64 {
	return [...]*uint64{&l.ReadBPS, &l.WriteBPS, &l.ReadIOPS, &l.WriteIOPS}[i]
}

// tighten lowers l's figures to o's where o sets a lower one.
func (l *Limit) tighten(o Limit, file string) {
	for i := range 4 {
		if v, cur := *o.field(i), l.field(i); v != 0 && (*cur == 0 || v < *cur) {
			*cur = v
		}
	}
	if o.Any() {
		l.Files = append(l.Files, file)
	}
}
