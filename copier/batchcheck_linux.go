package copier

import (
	"fmt"
	"path/filepath"
	"strings"

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
		if newFileOf(p.dst.path).same(newFileOf(q.dst.path)) {
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

// sameState refuses p when it keeps its resume state in q's (job j).
func sameState(p, q *Plan, j int) error {
	if p.resume == nil || q.resume == nil || newFileKey(p.resume.statePath) != newFileKey(q.resume.statePath) {
		return nil
	}
	return refuse(KindBadInput, p.dst.path, fmt.Sprintf("keeps its resume state in %s, as job %d does: each job needs a state file of its own (Options.StatePath)", p.resume.statePath, j+1)).on("StatePath")
}

// newFile names the file a new DST will be: its folder by device and
// inode, which every spelling of it shares (symbolic links, "..",
// relative paths, a bind mount of it elsewhere), its name, and whether
// that folder ignores case. A folder that cannot be looked at is named by
// its resolved path.
type newFile struct {
	folder, name string
	caseless     bool
}

func newFileOf(path string) newFile {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f := newFile{name: base}
	if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(fd)
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			f.folder = fmt.Sprintf("folder %d:%d", st.Dev, st.Ino)
			f.caseless = caseless(fd)
			return f
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f.folder = dir
	return f
}

// same: the two names make one file.
func (f newFile) same(g newFile) bool {
	return f.folder == g.folder && (f.name == g.name || f.caseless && strings.EqualFold(f.name, g.name))
}

// fsCasefold is FS_CASEFOLD_FL (linux/fs.h, not in x/sys): a folder of
// ext4 or f2fs (made with -O casefold) whose names ignore case.
const fsCasefold = 0x40000000

// caselessFilesystems ignore case in every folder: FAT, exFAT, NTFS (ntfs3)
// and SMB shares (statfs magic numbers).
var caselessFilesystems = map[int64]bool{0x4d44: true, 0x2011bab0: true, 0x7366746e: true, 0xff534d42: true, 0xfe534d42: true}

// caseless says whether the folder open as fd finds "A.img" under
// "a.img" (case-insensitive lookups). Unicode normalization, which ext4's
// casefolding also ignores, is not compared.
func caseless(fd int) bool {
	if flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil && flags&fsCasefold != 0 {
		return true
	}
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && caselessFilesystems[int64(uint32(fs.Type))]
}
