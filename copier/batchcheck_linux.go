package copier

import (
	"fmt"
	"path/filepath"

	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// The refusals across the jobs of a batch. Each job has passed Prepare
// alone; what is left is what two jobs do to each other while they run
// at once:
//
//   - two jobs write one DST, or DSTs that share bytes through partitions
//     and loop devices (a disk and its own partition): the later job is
//     refused, whatever the ranges, since each job cuts, sizes, locks
//     and reports its DST as a whole copy of its own;
//   - a job's DST is another job's SRC, or shares bytes with it through
//     partitions and loop devices: the reader would copy a mix of old
//     and new blocks. The writing job is refused.

// crossCheck returns one refusal per job that conflicts with another, in
// job order. Jobs Prepare refused (nil plans) are left out.
func (b *Batch) crossCheck() []*JobError {
	var out []*JobError
	for i, p := range b.Plans {
		if p == nil {
			continue
		}
		if err := b.crossJob(i, p); err != nil {
			out = append(out, &JobError{Index: i, Err: err})
		}
	}
	return out
}

// crossJob refuses job i if it writes what an earlier job writes, or
// what any other job reads.
func (b *Batch) crossJob(i int, p *Plan) error {
	for j, q := range b.Plans {
		if j == i || q == nil {
			continue
		}
		if j < i {
			if err := sameDst(p, q, j); err != nil {
				return err
			}
		}
		if err := dstOnSrc(p, q, j); err != nil {
			return err
		}
	}
	return nil
}

// sameDst refuses p when its DST is q's (job j), by identity (any node
// or path of one file or device), by name for two new files, or by bytes
// shared through partitions and loop devices.
func sameDst(p, q *Plan, j int) error {
	if same, told := sameExport(&p.dst, &q.dst); told {
		if same {
			return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is also job %d's DST (%s): a batch writes each DST once", j+1, q.dst.path)).on("Dst")
		}
		return nil
	}
	switch {
	case !p.dst.exists && !q.dst.exists:
		if newFileKey(p.dst.path) == newFileKey(q.dst.path) {
			return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is also job %d's DST (%s): a batch writes each DST once", j+1, q.dst.path)).on("Dst")
		}
	case p.dst.exists && q.dst.exists:
		if guard.ObjectOf(&p.dst.st) == guard.ObjectOf(&q.dst.st) {
			return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is also job %d's DST (%s): a batch writes each DST once", j+1, q.dst.path)).on("Dst")
		}
		if ov := guard.FindOverlap(q.dstSpan(), p.dstSpan()); ov != nil {
			return refuse(KindOverlap, p.dst.path, fmt.Sprintf("overlaps job %d's DST on %s: job %d's DST %s, this DST %s", j+1, ov.On, j+1, ov.Src, ov.Dst)).on("Dst")
		}
	}
	return nil
}

// dstOnSrc refuses p when its DST is q's SRC (job j), or shares bytes
// with it through partitions and loop devices. A new DST is no one's SRC.
func dstOnSrc(p, q *Plan, j int) error {
	if !p.dst.exists {
		return nil
	}
	if same, told := sameExport(&p.dst, &q.src); told {
		if same {
			return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is job %d's SRC (%s): job %d would read blocks this job overwrites", j+1, q.src.path, j+1)).on("Dst")
		}
		return nil
	}
	if guard.ObjectOf(&p.dst.st) == guard.ObjectOf(&q.src.st) {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is job %d's SRC (%s): job %d would read blocks this job overwrites", j+1, q.src.path, j+1)).on("Dst")
	}
	if ov := guard.FindOverlap(q.srcSpan(), p.dstSpan()); ov != nil {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("overlaps job %d's SRC on %s: job %d's SRC %s, this DST %s", j+1, ov.On, j+1, ov.Src, ov.Dst)).on("Dst")
	}
	return nil
}

// newFileKey names the file a new DST will be: its folder by device and
// inode, which every spelling of it shares (symbolic links, "..",
// relative paths, a bind mount of it elsewhere), and its name. Two paths
// with one key create one file. A folder that cannot be looked at is
// named by its resolved path.
func newFileKey(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) == nil {
		return fmt.Sprintf("folder %d:%d, %s", st.Dev, st.Ino, base)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base)
}
