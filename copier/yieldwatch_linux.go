package copier

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/blkcg"
	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// What --yield's controller (yield_linux.go) watches: the disks' request
// counts, a probe read of SRC, and the kernel's I/O pressure.

// watchDisks finds the whole disks under SRC and DST, and under a loop
// device those that hold what backs it: the copy's requests to a loop
// device reach the disk under its backing file as the loop's, and a
// disk that also holds SRC (a loop device on a file beside SRC, as
// tests and benches make) would count them as others' and the copy
// would hold itself back behind its own writes.
func (y *yielder) watchDisks(p *Plan) {
	for _, side := range []struct {
		ep  *endpoint
		src bool
	}{{p.src, true}, {p.dst, false}} {
		disk, ok := side.ep.disk, side.ep.onDisk
		for hops := 0; ok && hops < maxLoopHops; hops++ {
			dev, err := sysblock.Lookup(disk)
			if err != nil {
				break
			}
			y.watchDisk(dev, side.src, p.BlockSize)
			disk, ok = loopBackingDisk(dev)
		}
	}
}

// watchDisk adds dev, a whole disk, to those watched, on SRC's side or
// DST's.
func (y *yielder) watchDisk(dev sysblock.Dev, src bool, blockSize int) {
	stat := dev.StatPath()
	i := slices.IndexFunc(y.disks, func(d *yieldDisk) bool { return d.stat == stat })
	if i < 0 {
		req := min(int64(blockSize), ownBio)
		if q, ok := sysblock.QueueOf(dev.Rdev); ok && q.MaxSectorsKB > 0 {
			req = min(req, int64(q.MaxSectorsKB)*1024)
		}
		y.disks = append(y.disks, &yieldDisk{stat: stat, req: req})
		i = len(y.disks) - 1
	}
	if src {
		y.disks[i].src = true
	} else {
		y.disks[i].dst = true
	}
}

// loopBackingDisk is the whole disk under what backs loop device dev:
// the device itself, or the filesystem's holding the backing file.
func loopBackingDisk(dev sysblock.Dev) (uint64, bool) {
	l, ok := sysblock.LoopOf(dev)
	if !ok {
		return 0, false
	}
	if l.Backing.Rdev != 0 {
		return blkcg.DiskOf(l.Backing.Rdev)
	}
	if l.Backing.Dev == 0 {
		return 0, false
	}
	return blkcg.DiskOf(l.Backing.Dev)
}

// openProbe opens SRC again for the probe reads: 4 KiB (or SRC's
// alignment), O_DIRECT, so that they reach the disk. A SRC that takes no
// O_DIRECT, or a range shorter than a read, gets no probes.
func (y *yielder) openProbe(p *Plan) {
	n := max(4096, p.src.geo.DirectAlign())
	if !p.src.direct || p.Length < int64(n) {
		return
	}
	// The path is opened again, after the copy opened it: what it names
	// now must be SRC, or there are no probes (another file put there
	// was read in its place). O_NONBLOCK: a FIFO put there opens at once
	// and is refused; the open waited for a writer, and the copy never
	// started, deaf to SIGTERM. Off again before the reads.
	f, err := os.OpenFile(p.src.path, os.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	if fe, ok := p.src.end.(*fileEnd); !ok || fe.checkSame(f) != nil || setFlag(f, unix.O_NONBLOCK, false) != nil {
		f.Close()
		return
	}
	buf, err := align.AllocBuffers(1, n)
	if err != nil {
		f.Close()
		return
	}
	y.probe, y.buf, y.probeLen = f, buf, n
	y.lo = align.RoundUp(p.opts.SrcOffset, int64(n))
	y.hi = align.RoundDown(p.opts.SrcOffset+p.Length, int64(n))
	if y.hi <= y.lo {
		y.closeProbe()
	}
}

func (y *yielder) closeProbe() {
	if y.probe != nil {
		y.probe.Close()
		y.buf.Free()
		y.probe = nil
	}
}

// probeNow times up to n reads at random places of SRC's data, one after
// another, and returns their upper quartile (a foreground suffers in its
// tail first); 0 without probes. It stops after half
// a tick: on a disk where a read waits long (in a cgroup throttle's
// queue, say) one read says enough, and the tick must go on.
func (y *yielder) probeNow(n int) time.Duration {
	if y.probe == nil {
		return 0
	}
	fd := int(y.probe.Fd())
	var took []time.Duration
	for begin := time.Now(); len(took) < n && time.Since(begin) < yieldTick/2; {
		off := y.lo + rand.Int64N((y.hi-y.lo)/int64(y.probeLen))*int64(y.probeLen)
		// A hole is not on the disk: read the data after it instead.
		if d, err := unix.Seek(fd, off, unix.SEEK_DATA); err == nil && d < y.hi {
			off = align.RoundDown(d, int64(y.probeLen))
		}
		start := time.Now()
		if _, err := unix.Pread(fd, y.buf.Slots[0][:y.probeLen], off); err != nil {
			return 0 // SRC can no longer be read this way: no probe this tick
		}
		took = append(took, time.Since(start))
	}
	y.probed = len(took)
	y.probes.Add(int64(len(took)))
	if len(took) == 0 {
		return 0
	}
	slices.Sort(took)
	return took[len(took)*3/4]
}

// readReqs counts the requests submitted to a disk that completed, reads
// and writes, before the scheduler merged them: completed plus merged
// (fields 1, 2, 5 and 6 of its stat file). The copy's sequential
// requests merge (1 MiB reads into 4 MiB ones on a virtio disk), a
// foreground's scattered ones rarely; counted before merging, the copy's
// own are what it sent. -1 when the file cannot be read.
func readReqs(path string) int64 {
	st, err := sysblock.ReadStat(path)
	if err != nil {
		return -1
	}
	return st.ReadIOs + st.ReadMerges + st.WriteIOs + st.WriteMerges
}

// readPSI reads the total stall times of /proc/pressure/io, "some" and
// "full", in microseconds; -1 each where there is no PSI.
func readPSI() [2]int64 {
	out := [2]int64{-1, -1}
	b, err := os.ReadFile(psiIO)
	if err != nil {
		return out
	}
	return parsePSI(string(b))
}

// parsePSI reads "some avg10=.. avg60=.. avg300=.. total=N" and the
// "full" line.
func parsePSI(data string) [2]int64 {
	out := [2]int64{-1, -1}
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var i int
		switch f[0] {
		case "some":
			i = 0
		case "full":
			i = 1
		default:
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					out[i] = n
				}
			}
		}
	}
	return out
}
