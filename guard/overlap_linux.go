package guard

import (
	"fmt"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// Object is what bytes are stored on: a regular file or a block device.
// Two Objects are equal when they are the same file (whatever its path)
// or the same device (whatever its node).
type Object struct {
	Block    bool
	Rdev     uint64 // a block device's number
	Dev, Ino uint64 // a regular file's device and inode
}

// ObjectOf identifies what st describes.
func ObjectOf(st *unix.Stat_t) Object {
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return Object{Block: true, Rdev: st.Rdev}
	}
	return Object{Dev: st.Dev, Ino: st.Ino}
}

func blockObject(rdev uint64) Object { return Object{Block: true, Rdev: rdev} }

// How a span was reached from the one above it.
const (
	viaSelf      = ""          // the endpoint itself
	viaPartition = "partition" // a partition's bytes on its disk
	viaLoop      = "loop"      // a loop device's bytes in its backing
)

// Span is the bytes [Off, End) of an object; End < 0 runs to its end.
type Span struct {
	Obj      Object
	Off, End int64
	Label    string // a path to name it by in findings
	via      string
}

// Overlaps says a and b share at least one byte.
func (a Span) Overlaps(b Span) bool {
	if a.Obj != b.Obj || a.Off == a.End || b.Off == b.End {
		return false
	}
	return (b.End < 0 || a.Off < b.End) && (a.End < 0 || b.Off < a.End)
}

// below is the same bytes one level down, seen from the object s lies
// on: a partition's on its disk, a loop device's in its backing file or
// device.
func (s Span) below() (Span, bool) {
	if !s.Obj.Block {
		return Span{}, false
	}
	b, err := sysblock.Lookup(s.Obj.Rdev)
	if err != nil {
		return Span{}, false
	}
	if b.IsPartition() {
		d, err := b.Disk()
		start, err2 := b.PartitionStart()
		if err != nil || err2 != nil {
			return Span{}, false
		}
		return s.shift(Span{Obj: blockObject(d.Rdev), Label: d.Node(), via: viaPartition}, start), true
	}
	if l, ok := sysblock.LoopOf(b); ok {
		return s.shift(window(l), l.Offset), true
	}
	return Span{}, false
}

// shift places s's range, moved by base, on the object of to.
func (s Span) shift(to Span, base int64) Span {
	to.Off, to.End = s.Off+base, -1
	if s.End >= 0 {
		to.End = s.End + base
	}
	return to
}

// window is the part of its backing a loop device shows.
func window(l sysblock.Loop) Span {
	obj := Object{Dev: l.Backing.Dev, Ino: l.Backing.Ino}
	if l.Backing.Rdev != 0 {
		obj = blockObject(l.Backing.Rdev)
	}
	s := Span{Obj: obj, Off: l.Offset, End: -1, Label: l.File, via: viaLoop}
	if l.Size > 0 {
		s.End = l.Offset + l.Size
	}
	return s
}

// maxStack bounds how deep partitions and loop devices are followed: real
// stacks are two or three deep, and a loop over its own loop (which the
// kernel refuses) must not hang us.
const maxStack = 8

// stack follows s down through partitions and loop devices.
func stack(s Span) []Span {
	out := []Span{s}
	for len(out) < maxStack {
		next, ok := out[len(out)-1].below()
		if !ok {
			break
		}
		out = append(out, next)
	}
	return out
}

// Through lists the block devices whose I/O counters a write to s
// moves: s itself when it is one, and every device below it (a
// partition's disk, a loop device's backing device), by number.
func Through(s Span) []uint64 {
	var devs []uint64
	for _, sp := range stack(s) {
		if sp.Obj.Block {
			devs = append(devs, sp.Obj.Rdev)
		}
	}
	return devs
}

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
