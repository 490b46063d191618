package copier

import "fmt"

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
//     and new blocks. The writing job is refused;
//   - two resumable jobs keep one state file: each would record its
//     copy over the other's (ringcp --jobs --state FOLDER gives each job
//     its own).

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
			if err := sameState(p, q, j); err != nil {
				return err
			}
		}
		if err := dstOnSrc(p, q, j); err != nil {
			return err
		}
	}
	return nil
}

// sameDst refuses p when its DST is q's (job j): one object (any node or
// path of one file or device, one export, two new files of one name), or
// bytes shared through partitions and loop devices.
func sameDst(p, q *Plan, j int) error {
	if same, _ := oneObject(p.dst, q.dst); same {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is also job %d's DST (%s): a batch writes each DST once", j+1, q.dst.path)).on("Dst")
	}
	if ov := p.dst.overlap(p.dstRange(), q.dst, q.dstRange()); ov != nil {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("overlaps job %d's DST on %s: job %d's DST %s, this DST %s", j+1, ov.on, j+1, ov.theirs, ov.mine)).on("Dst")
	}
	return nil
}

// dstOnSrc refuses p when its DST is q's SRC (job j), or shares bytes
// with it through partitions and loop devices. A new DST is no one's SRC.
func dstOnSrc(p, q *Plan, j int) error {
	if !p.dst.exists {
		return nil
	}
	if same, _ := oneObject(p.dst, q.src); same {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("is job %d's SRC (%s): job %d would read blocks this job overwrites", j+1, q.src.path, j+1)).on("Dst")
	}
	if ov := p.dst.overlap(p.dstRange(), q.src, q.srcRange()); ov != nil {
		return refuse(KindOverlap, p.dst.path, fmt.Sprintf("overlaps job %d's SRC on %s: job %d's SRC %s, this DST %s", j+1, ov.on, j+1, ov.theirs, ov.mine)).on("Dst")
	}
	if ov := p.dst.overlap(byteRange{0, -1}, q.src, byteRange{0, -1}); ov != nil {
		if q.ownWrites == "" {
			q.ownWrites = fmt.Sprintf("another job's DST %s shares %s with SRC, in other bytes", p.dst.path, ov.on)
		}
		q.ownThrough = append(q.ownThrough, throughOf(p.dst)...)
	}
	return nil
}

// sameState refuses p when it keeps its resume state in q's (job j).
func sameState(p, q *Plan, j int) error {
	if p.resume == nil || q.resume == nil || newFileKey(p.resume.statePath) != newFileKey(q.resume.statePath) {
		return nil
	}
	return refuse(KindBadInput, p.dst.path, fmt.Sprintf("keeps its resume state in %s, as job %d does: each job needs a state file of its own (Options.StatePath)", p.resume.statePath, j+1)).on("StatePath")
}
