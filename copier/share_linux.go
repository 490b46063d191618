package copier

import (
	"strings"

	"github.com/ringcp/ringcp/internal/blkcg"
	"github.com/ringcp/ringcp/internal/sysblock"
)

// blkcgSys is whose cgroups are read; tests replace it.
var blkcgSys = blkcg.Self

// findLimits finds what the copy's sizes are fitted to besides the rate
// cap: the cgroup limits of SRC's and DST's disks (share.go), and says
// how yield will cut them.
func (p *Plan) findLimits() error {
	p.findIOLimits()
	if len(p.IOLimits) > 0 {
		p.note("%s", blockingWhy)
	}
	if p.opts.Yield {
		p.note("yield: depth and rate are cut while others wait on SRC's or DST's disk, and raised again when they no longer do")
	}
	return nil
}

// findIOLimits looks up the cgroup limits on the disks of both ends and
// adds those the copy meets to its sizing: reads on SRC's disk, writes on
// DST's. The read passes after the copy (Options.Verify's read-back, a
// resumed checksum's read of SRC, a compare of what an earlier run
// copied) read SRC's disk and, with Verify, DST's: their limits are
// sizing.reads (readfit.go).
func (p *Plan) findIOLimits() {
	srcDisk, srcOK := p.src.disk, p.src.onDisk
	dstDisk, dstOK := p.dst.disk, p.dst.onDisk
	for _, side := range []struct {
		name     string
		disk     uint64
		ok       bool
		src, dst bool
	}{
		{"SRC and DST", srcDisk, srcOK && dstOK && srcDisk == dstDisk, true, true},
		{"SRC", srcDisk, srcOK && (!dstOK || srcDisk != dstDisk), true, false},
		{"DST", dstDisk, dstOK && (!srcOK || srcDisk != dstDisk), false, true},
	} {
		if !side.ok {
			continue
		}
		l, err := blkcgSys.Lookup(side.disk)
		if err != nil {
			p.note("cgroup I/O limits of %s's disk %s: not read (%v)", side.name, sysblock.Number(side.disk), err)
			continue
		}
		lim := IOLimit{Disk: sysblock.Number(side.disk), Side: side.name, Files: l.Files}
		if side.src || p.opts.Verify {
			lim.ReadBPS, lim.ReadIOPS = l.ReadBPS, l.ReadIOPS // DST's: its read-back
		}
		if side.dst {
			lim.WriteBPS, lim.WriteIOPS = l.WriteBPS, l.WriteIOPS
		}
		if lim.ReadBPS|lim.WriteBPS|lim.ReadIOPS|lim.WriteIOPS == 0 {
			continue
		}
		p.IOLimits = append(p.IOLimits, lim)
		p.note("cgroup I/O limit on %s's disk %s: %s (%s)", lim.Side, lim.Disk, lim.describe(), strings.Join(lim.Files, ", "))
		why := "the cgroup limit on disk " + lim.Disk
		if side.src {
			p.sizing.addLimit(lim.ReadBPS, lim.ReadIOPS, why)
		}
		if side.dst {
			p.sizing.addLimit(lim.WriteBPS, lim.WriteIOPS, why)
		}
		p.sizing.reads.add(lim.ReadBPS, lim.ReadIOPS, why)
	}
}

// findReadLimits finds the cgroup read limits on the disks of a
// Checksum's or a Compare's ends, which its reads are fitted to
// (readfit.go): fewer buffers, and requests that cut a cell.
func (p *Plan) findReadLimits() error {
	ends := []*endpoint{p.src}
	if p.dst.path != p.src.path {
		ends = append(ends, p.dst)
	}
	seen := map[uint64]bool{}
	for i, ep := range ends {
		disk, ok := ep.disk, ep.onDisk
		if !ok || seen[disk] {
			continue
		}
		seen[disk] = true
		l, err := blkcgSys.Lookup(disk)
		if err != nil {
			p.note("cgroup I/O limits of %s's disk %s: not read (%v)", ep.path, sysblock.Number(disk), err)
			continue
		}
		if l.ReadBPS|l.ReadIOPS == 0 {
			continue
		}
		side := [...]string{"SRC", "DST"}[i]
		if len(ends) == 2 && i == 0 && p.dst.onDisk && p.dst.disk == disk {
			side = "SRC and DST"
		}
		lim := IOLimit{Disk: sysblock.Number(disk), Side: side, ReadBPS: l.ReadBPS, ReadIOPS: l.ReadIOPS, Files: l.Files}
		p.IOLimits = append(p.IOLimits, lim)
		p.note("cgroup I/O limit on %s's disk %s: %s (%s)", lim.Side, lim.Disk, lim.describe(), strings.Join(lim.Files, ", "))
		p.sizing.reads.add(l.ReadBPS, l.ReadIOPS, "the cgroup limit on disk "+lim.Disk)
	}
	return nil
}

// describe says the limits the copy meets: "write 100 MiB/s".
func (l IOLimit) describe() string {
	return blkcg.Limit{ReadBPS: l.ReadBPS, WriteBPS: l.WriteBPS, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}.String()
}
