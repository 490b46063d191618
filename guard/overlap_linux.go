package guard

import (
	"fmt"
	"strings"
)

// Overlap is where a copy's SRC and DST reach the same bytes through
// partitions or loop devices: a disk and its own partition, a loop device
// and the file or device behind it. Writing DST would destroy what is
// still to be read.
type Overlap struct {
	On  string // the object both reach, by its label
	Src string // SRC's route to it: "/dev/loop0p1 -> /dev/loop0 bytes 1048576-2097152"
	Dst string // DST's route
}

// FindOverlap follows src and dst down through partitions and loop
// devices and returns the first place their bytes meet, or nil. The plain
// case (one object, overlapping ranges) is found too, with one-step routes.
func FindOverlap(src, dst Span) *Overlap {
	srcs, dsts := stack(src), stack(dst)
	for i, s := range srcs {
		for j, d := range dsts {
			if s.Overlaps(d) {
				return &Overlap{On: s.Label, Src: route(srcs[:i+1]), Dst: route(dsts[:j+1])}
			}
		}
	}
	return nil
}

// route describes a stack: "/dev/loop0p1 -> /dev/loop0 bytes 1048576-2097152".
func route(st []Span) string {
	names := make([]string, len(st))
	for i, s := range st {
		names[i] = s.Label
	}
	last := st[len(st)-1]
	end := "end"
	if last.End >= 0 {
		end = fmt.Sprint(last.End)
	}
	return fmt.Sprintf("%s bytes %d-%s", strings.Join(names, " -> "), last.Off, end)
}
