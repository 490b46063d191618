package copier

import (
	"fmt"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// object is what bytes are stored on: a regular file or a block device.
type object struct {
	block    bool
	rdev     uint64 // a block device
	dev, ino uint64 // a regular file
}

func objectOf(st *unix.Stat_t) object {
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return object{block: true, rdev: st.Rdev}
	}
	return object{dev: st.Dev, ino: st.Ino}
}

// How a span was reached from the one above it.
const (
	viaSelf      = ""          // the endpoint itself
	viaPartition = "partition" // a partition's bytes on its disk
	viaLoop      = "loop"      // a loop device's bytes in its backing
)

// span is the bytes [off, end) of an object; end < 0 runs to its end.
type span struct {
	obj      object
	off, end int64
	label    string // a path to name it by
	via      string
}

// overlaps says a and b share at least one byte.
func (a span) overlaps(b span) bool {
	if a.obj != b.obj || a.off == a.end || b.off == b.end {
		return false
	}
	return (b.end < 0 || a.off < b.end) && (a.end < 0 || b.off < a.end)
}

// below is the same bytes one level down, seen from the object s lies
// on: a partition's on its disk, a loop device's in its backing file or
// device.
func (s span) below() (span, bool) {
	if !s.obj.block {
		return span{}, false
	}
	b, err := sysblock.Lookup(s.obj.rdev)
	if err != nil {
		return span{}, false
	}
	if b.IsPartition() {
		d, err := b.Disk()
		start, err2 := b.PartitionStart()
		if err != nil || err2 != nil {
			return span{}, false
		}
		return s.shift(span{obj: object{block: true, rdev: d.Rdev}, label: d.Node(), via: viaPartition}, start), true
	}
	if l, ok := loopOf(b); ok {
		return s.shift(l.window(), l.Offset), true
	}
	return span{}, false
}

// shift places s's range, moved by base, on the object of to.
func (s span) shift(to span, base int64) span {
	to.off, to.end = s.off+base, -1
	if s.end >= 0 {
		to.end = s.end + base
	}
	return to
}

// maxStack bounds how deep partitions and loop devices are followed: real
// stacks are two or three deep, and a loop over its own loop (which the
// kernel refuses) must not hang us.
const maxStack = 8

// stack follows s down through partitions and loop devices.
func stack(s span) []span {
	out := []span{s}
	for len(out) < maxStack {
		next, ok := out[len(out)-1].below()
		if !ok {
			break
		}
		out = append(out, next)
	}
	return out
}

// srcSpan is what the copy reads; dstSpan what it may change: with
// truncation, all of DST from DstOffset on (cut there, then sized).
func (p *Plan) srcSpan() span {
	o := p.opts
	return span{obj: objectOf(&p.src.st), off: o.SrcOffset, end: o.SrcOffset + p.Length, label: o.Src}
}

func (p *Plan) dstSpan() span {
	o := p.opts
	s := span{obj: objectOf(&p.dst.st), off: o.DstOffset, end: o.DstOffset + p.Length, label: o.Dst}
	if p.truncate {
		s.end = -1
	}
	return s
}

// checkOverlap refuses SRC and DST that reach the same bytes through
// partitions or loop devices: a disk and its own partition, a loop device
// and the file or device behind it. Writing would destroy what is still
// to be read. checkSameObject has already caught the plain cases.
func (p *Plan) checkOverlap() error {
	if !p.dst.exists {
		return nil
	}
	srcs, dsts := stack(p.srcSpan()), stack(p.dstSpan())
	for i, s := range srcs {
		for j, d := range dsts {
			if s.overlaps(d) {
				return refuse(p.opts.Dst, fmt.Sprintf("SRC and DST overlap on %s: SRC %s, DST %s",
					s.label, route(srcs[:i+1]), route(dsts[:j+1])))
			}
		}
	}
	return nil
}

// route describes a stack: "/dev/loop0p1 -> /dev/loop0 bytes 1048576-2097152".
func route(st []span) string {
	names := make([]string, len(st))
	for i, s := range st {
		names[i] = s.label
	}
	last := st[len(st)-1]
	end := "end"
	if last.end >= 0 {
		end = fmt.Sprint(last.end)
	}
	return fmt.Sprintf("%s bytes %d-%s", strings.Join(names, " -> "), last.off, end)
}
