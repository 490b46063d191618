package copier

import (
	"strings"

	"github.com/ringcp/ringcp/internal/blkcg"
	"github.com/ringcp/ringcp/internal/sysblock"
)

// blkcgSys is whose cgroups are read; tests replace it.
var blkcgSys = blkcg.Self

// fitShare fits the block size and depth to the rate cap and to the
// cgroup limits of SRC's and DST's disks (share.go), and sets up what
// lets the cap change while the copy runs.
func (p *Plan) fitShare() error {
	f := shareFit{cap: p.opts.MaxRate, yield: p.opts.Yield}
	p.findIOLimits(&f)
	if len(p.IOLimits) > 0 {
		p.note("%s", blockingWhy)
	}
	p.fitSizes(f, int64(p.unit()))
	if p.opts.Yield {
		p.note("yield: depth and rate are cut while others wait on SRC's or DST's disk, and raised again when they no longer do")
	}
	return nil
}

// findIOLimits looks up the cgroup limits on the disks of both ends and
// adds those the copy meets to f: reads on SRC's disk, writes on DST's.
// The read passes after the copy (Options.Verify's read-back, a resumed
// checksum's read of SRC, a compare of what an earlier run copied) read
// SRC's disk and, with Verify, DST's: their fit is passFit.
func (p *Plan) findIOLimits(f *shareFit) {
	srcDisk, srcOK := diskUnder(&p.src)
	dstDisk, dstOK := diskUnder(&p.dst)
	var pass shareFit
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
			f.add(lim.ReadBPS, lim.ReadIOPS, why)
		}
		if side.dst {
			f.add(lim.WriteBPS, lim.WriteIOPS, why)
		}
		pass.add(lim.ReadBPS, lim.ReadIOPS, why)
	}
	if p.opts.Verify || p.opts.Checksum != nil {
		p.passFit = fitReads(pass, int64(p.unit()), p.QueueDepth)
		if p.passFit.note != "" {
			p.note("read passes (read-back, checksum of a resumed part): %s", p.passFit.note)
		}
	}
}

// fitReadLimits fits a Checksum's or a Compare's reads to the cgroup
// read limits on the disks of its ends (readfit.go): fewer buffers, and
// requests that cut a cell.
func (p *Plan) fitReadLimits() {
	var f shareFit
	ends := []*endpoint{&p.src}
	if p.dst.path != p.src.path {
		ends = append(ends, &p.dst)
	}
	seen := map[uint64]bool{}
	for i, ep := range ends {
		disk, ok := diskUnder(ep)
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
		if len(ends) == 2 && i == 0 {
			if d, ok := diskUnder(&p.dst); ok && d == disk {
				side = "SRC and DST"
			}
		}
		lim := IOLimit{Disk: sysblock.Number(disk), Side: side, ReadBPS: l.ReadBPS, ReadIOPS: l.ReadIOPS, Files: l.Files}
		p.IOLimits = append(p.IOLimits, lim)
		p.note("cgroup I/O limit on %s's disk %s: %s (%s)", lim.Side, lim.Disk, lim.describe(), strings.Join(lim.Files, ", "))
		f.add(l.ReadBPS, l.ReadIOPS, "the cgroup limit on disk "+lim.Disk)
	}
	p.passFit = fitReads(f, int64(p.unit()), p.QueueDepth)
	if p.passFit.depth > 0 {
		p.QueueDepth = p.passFit.depth
	}
	if p.passFit.note != "" {
		p.note("%s; %s", p.passFit.note, blockingWhy)
	}
}

// add tightens f to a limit of bps bytes and iops requests per second (0:
// none), set by why.
func (f *shareFit) add(bps, iops uint64, why string) {
	if bps > 0 && (f.limit == 0 || int64(min(bps, 1<<62)) < f.limit) {
		f.limit, f.limitWhy = int64(min(bps, 1<<62)), why
	}
	if iops > 0 && (f.iops == 0 || int64(min(iops, 1<<62)) < f.iops) {
		f.iops = int64(min(iops, 1<<62))
	}
}

// describe says the limits the copy meets: "write 100 MiB/s".
func (l IOLimit) describe() string {
	return blkcg.Limit{ReadBPS: l.ReadBPS, WriteBPS: l.WriteBPS, ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}.String()
}

// diskUnder is the whole disk whose I/O the cgroups count for ep: the
// device itself, or the disk of the file system holding the file (for a
// new DST, its folder). A file system on no disk (tmpfs, NFS, FUSE;
// btrfs's anonymous device) has none.
func diskUnder(ep *endpoint) (uint64, bool) {
	if ep.isBlock {
		return blkcg.DiskOf(ep.st.Rdev)
	}
	dev, ok := ep.fsDev()
	if !ok {
		return 0, false
	}
	return blkcg.DiskOf(dev)
}
