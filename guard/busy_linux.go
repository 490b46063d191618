package guard

import (
	"errors"
	"os"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// BusyKind says how firmly a target is taken.
type BusyKind int

// Kinds of Busy.
const (
	// InUse: held by device-mapper, md or bcache (sysfs holders), open
	// exclusively by another program, or shown by a loop device. Writing
	// it pulls data from under its user; a caller may let a user insist.
	InUse BusyKind = iota
	// Mounted: mounted (in any mount namespace) or active swap. The
	// kernel trusts what it wrote there: a copy over it corrupts the file
	// system or the memory of running programs. Never to be written.
	Mounted
)

// Busy is one reason not to write a target.
type Busy struct {
	What string // "/dev/vdx2 is mounted on /data (ext4)", "/dev/vdx1 is held by dm-0"
	Kind BusyKind
}

// FindBusy lists why dst must not (Mounted) or should not (InUse) be
// written: dst, the disk it is a partition of, a partition of it (for a
// whole disk), what lies below it through partitions and loop devices, and
// every loop device that shows its bytes, with what uses that in turn. src
// is what the copy reads: a loop device on SRC's own stack is not DST's
// user. A block device dst is opened at dst.Label with O_EXCL, read-only,
// for a moment, unless it was found mounted already. The error is only
// for a mount table that cannot be read.
func FindBusy(dst, src Span) ([]Busy, error) {
	table, err := readMountTable()
	if err != nil {
		return nil, err
	}
	dsts := stack(dst)
	var out []Busy
	for _, s := range dsts {
		if s.Obj.Block {
			out = append(out, blockBusy(table, s, "")...)
		} else if m := table.of(s.Obj); m != "" {
			out = append(out, Busy{What: s.Label + " is " + m, Kind: Mounted})
		}
	}
	skip := map[Object]bool{}
	for _, s := range append(dsts, stack(src)...) {
		skip[s.Obj] = true // DST itself, what lies below it, and what SRC reads through
	}
	out = append(out, loopUsers(table, "DST", dsts, skip, maxStack)...)
	if dst.Obj.Block && !anyMounted(out) && heldExclusively(dst.Label) {
		out = append(out, exclusiveHolder(dst.Label))
	}
	return out, nil
}

// anyMounted says whether one of list is Mounted.
func anyMounted(list []Busy) bool {
	for _, b := range list {
		if b.Kind == Mounted {
			return true
		}
	}
	return false
}

// blockBusy says whether the block device of s, or (for a whole disk not
// reached from one of its partitions) any of its partitions, is mounted,
// swap, or held by a stacked driver.
func blockBusy(table mountTable, s Span, context string) []Busy {
	b, err := sysblock.Lookup(s.Obj.Rdev)
	if err != nil {
		// Without sysfs nothing can be said of partitions and holders.
		return []Busy{{What: context + err.Error()}}
	}
	devs := []sysblock.Dev{b}
	if s.via != viaPartition && !b.IsPartition() {
		parts, _ := b.Partitions()
		devs = append(devs, parts...)
	}
	var out []Busy
	for _, d := range devs {
		if m := table.of(blockObject(d.Rdev)); m != "" {
			out = append(out, Busy{What: context + d.Node() + " is " + m, Kind: Mounted})
		}
		if h := d.Holders(); len(h) > 0 {
			out = append(out, Busy{What: context + d.Node() + " is held by " + strings.Join(h, ", ")})
		}
	}
	return out
}

// loopUsers finds loop devices that show bytes of targets, and what uses
// them in turn: writing DST changes what they show (and writing through
// them changes SRC). end names the target ("DST", "SRC"). Objects in skip
// are the targets' own stacks.
func loopUsers(table mountTable, end string, targets []Span, skip map[Object]bool, depth int) []Busy {
	if depth == 0 {
		return nil
	}
	var out []Busy
	for _, l := range sysblock.BoundLoops() {
		self := Span{Obj: blockObject(l.Rdev), End: -1, Label: l.Node()}
		if skip[self.Obj] || !overlapsAny(window(l), targets) {
			continue
		}
		skip[self.Obj] = true
		context := "loop device " + l.Node() + " shows " + end + "'s bytes"
		users := blockBusy(table, self, context+", and ")
		if len(users) == 0 {
			users = []Busy{{What: context}}
		}
		out = append(out, users...)
		out = append(out, loopUsers(table, end, []Span{self}, skip, depth-1)...)
	}
	return out
}

func overlapsAny(s Span, list []Span) bool {
	for _, t := range list {
		if s.Overlaps(t) {
			return true
		}
	}
	return false
}

// heldExclusively opens a block device read-only with O_EXCL, which fails
// with EBUSY while a filesystem, swap, device-mapper, md or another
// program holds it exclusively. It writes nothing; any other failure is
// for opening the copy to tell.
func heldExclusively(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, unix.EBUSY)
	}
	f.Close()
	return false
}
