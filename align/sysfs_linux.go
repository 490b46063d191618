package align

import (
	"fmt"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// devNum is a block device number, as in st_dev or st_rdev.
type devNum struct{ major, minor uint32 }

func (d devNum) String() string { return fmt.Sprintf("%d:%d", d.major, d.minor) }

// queueInfo is what sysfs says of the queue of the device dev (maybe a
// partition: the queue is then its disk's), for Probe's notes.
type queueInfo struct {
	dev devNum
	sysblock.Queue
}

// probeQueue finds and reads the queue of device d, or returns nil: the
// anonymous devices of tmpfs, overlayfs, btrfs, NFS and FUSE (major 0)
// have none.
func probeQueue(d devNum) *queueInfo {
	q, ok := sysblock.QueueOf(unix.Mkdev(d.major, d.minor))
	if !ok {
		return nil
	}
	return &queueInfo{dev: d, Queue: q}
}

// fillQueueHints copies the queue's optimal and maximum I/O size and
// rotational flag into g, with notes.
func (g *Geometry) fillQueueHints(q *queueInfo) {
	if q.Optimal >= 0 {
		g.OptimalIO = q.Optimal
		g.note("optimal I/O %d (sysfs %s queue/optimal_io_size)", q.Optimal, q.dev)
	}
	if q.MaxSectorsKB > 0 {
		g.MaxIO = q.MaxSectorsKB * 1024
		g.note("max I/O %d (sysfs %s queue/max_sectors_kb %d)", g.MaxIO, q.dev, q.MaxSectorsKB)
	}
	if q.Rotational >= 0 {
		g.Rotational = q.Rotational == 1
		g.note("rotational %t (sysfs %s queue/rotational)", g.Rotational, q.dev)
	}
	if q.WriteZeroesMax >= 0 {
		g.WriteZeroesMax = q.WriteZeroesMax
		g.note("write zeroes up to %d (sysfs %s queue/write_zeroes_max_bytes)", q.WriteZeroesMax, q.dev)
	}
}
