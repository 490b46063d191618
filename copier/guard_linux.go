package copier

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// guard refuses an existing DST that something else relies on, before
// anything is written:
//
//   - SRC and DST overlap through partitions or loop devices (never
//     overridden: the copy would overwrite what it has yet to read);
//   - DST, the disk it is a partition of, a partition of it, or a loop
//     device stacked on it is mounted or active swap (never overridden:
//     the kernel trusts what it wrote there);
//   - DST is in use: held by device-mapper or md (sysfs holders), open
//     exclusively by another program (O_EXCL fails with EBUSY), or the
//     backing of a loop device. Options.Force writes anyway.
func (p *Plan) guard() error {
	if !p.dst.exists {
		return nil
	}
	if err := p.checkOverlap(); err != nil {
		return err
	}
	busy, err := p.dstBusy()
	if err != nil {
		return err
	}
	var inUse []string
	for _, b := range busy {
		if b.mounted {
			return refuseMounted(p.opts.Dst, b.what)
		}
		inUse = append(inUse, b.what)
	}
	if len(inUse) == 0 {
		return nil
	}
	why := strings.Join(inUse, "; ")
	if !p.opts.Force {
		return refuse(p.opts.Dst, "in use: "+why+" (--force writes anyway)")
	}
	p.Forced = why
	p.note("--force: writing %s although %s", p.opts.Dst, why)
	return nil
}

// refuseMounted is the refusal --force cannot lift.
func refuseMounted(path, what string) error {
	return refuse(path, "in use: "+what+"; ringcp never writes over a mounted file system or swap, not even with --force")
}

// busy is one reason not to write DST.
type busy struct {
	what    string
	mounted bool // mounted or swap: --force does not override it
}

// dstBusy lists why DST must not, or should not, be written.
func (p *Plan) dstBusy() ([]busy, error) {
	table, err := readMountTable()
	if err != nil {
		return nil, refuseErr(p.opts.Dst, "cannot tell whether DST is mounted", err)
	}
	dsts := stack(p.dstSpan())
	var out []busy
	for _, s := range dsts {
		if s.obj.block {
			out = append(out, blockBusy(table, s, "")...)
		} else if m := table.ofFile(s.obj.dev, s.obj.ino); m != "" {
			out = append(out, busy{what: s.label + " is " + m, mounted: true})
		}
	}
	skip := map[object]bool{}
	for _, s := range append(dsts, stack(p.srcSpan())...) {
		skip[s.obj] = true // DST itself, what lies below it, and what SRC reads through
	}
	out = append(out, loopUsers(table, dsts, skip, maxStack)...)
	if p.dst.isBlock && !anyMounted(out) {
		if err := probeExclusive(p.dst.path); err != nil {
			out = append(out, busy{what: err.Error()})
		}
	}
	return out, nil
}

// blockBusy says whether the block device of s, or (for a whole disk not
// reached from one of its partitions) any of its partitions, is mounted,
// swap, or held by a stacked driver.
func blockBusy(table mountTable, s span, context string) []busy {
	b, err := sysblock.Lookup(s.obj.rdev)
	if err != nil {
		// Without sysfs nothing can be said of partitions and holders.
		return []busy{{what: context + err.Error()}}
	}
	devs := []sysblock.Dev{b}
	if s.via != viaPartition && !b.IsPartition() {
		parts, _ := b.Partitions()
		devs = append(devs, parts...)
	}
	var out []busy
	for _, d := range devs {
		if m := table.ofBlock(d.Rdev); m != "" {
			out = append(out, busy{what: context + d.Node() + " is " + m, mounted: true})
		}
		if h := d.Holders(); len(h) > 0 {
			out = append(out, busy{what: context + d.Node() + " is held by " + strings.Join(h, ", ")})
		}
	}
	return out
}

// loopUsers finds loop devices that show bytes of targets, and what uses
// them in turn: writing DST changes what they show. Objects in skip are
// DST's own stack and SRC's.
func loopUsers(table mountTable, targets []span, skip map[object]bool, depth int) []busy {
	if depth == 0 {
		return nil
	}
	var out []busy
	for _, l := range boundLoops() {
		self := span{obj: object{block: true, rdev: l.Rdev}, end: -1, label: l.Node()}
		if skip[self.obj] || !overlapsAny(l.window(), targets) {
			continue
		}
		skip[self.obj] = true
		context := "loop device " + l.Node() + " shows DST's bytes"
		users := blockBusy(table, self, context+", and ")
		if len(users) == 0 {
			users = []busy{{what: context}}
		}
		out = append(out, users...)
		out = append(out, loopUsers(table, []span{self}, skip, depth-1)...)
	}
	return out
}

func overlapsAny(s span, list []span) bool {
	for _, t := range list {
		if s.overlaps(t) {
			return true
		}
	}
	return false
}

func anyMounted(list []busy) bool {
	for _, b := range list {
		if b.mounted {
			return true
		}
	}
	return false
}

// probeExclusive opens a block device read-only with O_EXCL, which fails
// with EBUSY while a file system, swap, device-mapper, md or another
// program holds it exclusively. It writes nothing.
func probeExclusive(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_EXCL|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("%s is open exclusively by another program (a VM, LVM, md, another ringcp?)", path)
	}
	if err != nil {
		return nil // not this check's business: opening for the copy will tell
	}
	return f.Close()
}
