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
// adds those the copy meets to its sizing.
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
		if side.src {
			lim.ReadBPS, lim.ReadIOPS = l.ReadBPS, l.ReadIOPS
		}
		if side.dst {
			lim.WriteBPS, lim.WriteIOPS = l.WriteBPS, l.WriteIOPS
		}
		if lim.ReadBPS|lim.WriteBPS|lim.ReadIOPS|lim.WriteIOPS == 0 {
			continue
		}
		p.IOLimits = append(p.IOLimits, lim)
		p.addLimit(lim)
	}
}

// addLimit tightens the sizing to one disk's limit, with a note.
func (p *Plan) addLimit(lim IOLimit) {
	f := &p.sizing
	p.note("cgroup I/O limit on %s's disk %s: %s (%s)", lim.Side, lim.Disk, lim.describe(), strings.Join(lim.Files, ", "))
	for _, bps := range []uint64{lim.ReadBPS, lim.WriteBPS} {
		if bps > 0 && (f.limit == 0 || int64(bps) < f.limit) {
			f.limit, f.limitWhy = int64(min(bps, 1<<62)), "the cgroup limit on disk "+lim.Disk
		}
	}
	for _, iops := range []uint64{lim.ReadIOPS, lim.WriteIOPS} {
		if iops > 0 && (f.iops == 0 || int64(iops) < f.iops) {
			f.iops = int64(min(iops, 1<<62))
		}
	}
}

// describe says the limits the copy meets: "write 100 MiB/s".
func (l IOLimit) describe() string {
	return blkcg.Limit{ReadBPS: l.ReadBPS, WriteBPS: l.WriteBPS, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}.String()
}
