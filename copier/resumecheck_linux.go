package copier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// Before a resumed copy writes anything, the part of the range its state
// records as copied (the prefix) must be shown to be what the earlier
// run wrote there: the rerun does not copy it again, and a DST changed
// there would end as a mix that looks complete.
//
// DST's marks alone cannot show it. The state is recorded after a
// barrier while the copy goes on writing past the prefix, so after a
// kill -9, a crash or a power loss DST's mtime and ctime are newer than
// the state says although only ringcp wrote; a foreign write looks the
// same. So:
//
//   - Where DST keeps marks (a file, a loop device's backing file) and
//     they are as the state recorded them, nothing wrote DST since, and
//     the prefix is trusted without reading. A run that stopped by a
//     signal or a failure records them last, once its writes have ended
//     and DST's timestamps are durable (stateWriter.settle): its rerun
//     reads nothing.
//   - Otherwise (after a kill -9 or a crash; on a disk or an export,
//     which keep no marks) the prefix is read from DST and from SRC side
//     by side and compared before anything is written; a difference
//     refuses the rerun and names its offset. A sample of blocks would
//     cost less and miss a one-byte write: the compare is exact, at the
//     cost of one read of the prefix at device speed. It also catches a
//     block device SRC changed there, which has no marks.
//
// What lies past the prefix needs no check: the rerun writes it all
// again, and a copy that owns DST's size cuts DST there first (cutAt),
// whoever wrote it.
//
// The marks are as good as the timestamps. A write within the clock tick
// of the state's stat keeps them on a filesystem with coarse timestamps
// (Linux 6.13's multigrain timestamps on ext4, xfs, btrfs and tmpfs give
// a change after a stat a new one); XFS's invisible I/O (open by handle,
// root only) and writes to the disk under the filesystem change none.

// errPrefixDiffers stops the compare at the first difference.
var errPrefixDiffers = errors.New("DST differs from SRC in the part an earlier run copied")

// proveDone shows that the prefix an earlier run copied is as it left it,
// or refuses. It runs once DST is opened and locked, before the first
// write.
func (p *Plan) proveDone(ctx context.Context, a *acquired, rep *Report) error {
	err := p.proveDoneRead(ctx, a, rep)
	if pr, ok := a.dst.(provedTarget); ok && err == nil {
		pr.proved()
	}
	return err
}

// provedTarget is a DST read differently while its prefix is checked (a
// resumed image, read as its last checkpoint left it): proved says the
// check is over, and the copy writes.
type provedTarget interface{ proved() }

func (p *Plan) proveDoneRead(ctx context.Context, a *acquired, rep *Report) error {
	r := p.resume
	if r == nil || r.state == nil || r.from == 0 {
		return nil
	}
	why, err := p.dstWritten(a)
	if err != nil {
		return err
	}
	if why == "" {
		why = srcUnmarked(r.state.Src)
	}
	if why == "" && p.opts.DstFormat == FormatQcow2 && p.opts.Qcow2.Backing != "" {
		// The image reads its backing file wherever it stores nothing,
		// and the state does not record that file: a change to it would
		// change the part already copied unseen.
		why = "the image reads its backing file where it stores nothing, and nothing records whether that file changed"
	}
	if why == "" && p.opts.ResumeProve {
		why = "Options.ResumeProve: SRC's identity is not taken on its word"
	}
	if why == "" {
		return nil
	}
	if p.changed.syncing {
		p.startOver(why) // sync_resume_linux.go
		return nil
	}
	rep.note("resume: %s: the %s an earlier run copied is compared with SRC before anything is written", why, units.Format(r.from))
	return p.compareDone(ctx, a)
}

// dstWritten says why DST may have been written since its state was
// recorded, or "" when its marks show it was not.
func (p *Plan) dstWritten(a *acquired) (string, error) {
	rec := p.resume.state.DstMarks
	if rec == nil {
		return "the state records no marks of DST (a disk or an export keeps none)", nil
	}
	f := a.dst.held().f
	if f != nil && p.resume.dst.Kind == kindBlock {
		// What was written to a loop device and not yet written back
		// reaches its backing file, and changes its marks, only now.
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return "", &os.PathError{Op: "fdatasync", Path: p.dst.path, Err: err}
		}
	}
	now := dstMarks(f, p.resume.dst)
	if now == nil {
		return "DST's marks cannot be read now", nil
	}
	if why := rec.differs(*now); why != "" {
		return "DST was written after the state was recorded: " + why, nil
	}
	if rec.coarse() {
		return "DST's filesystem keeps coarse timestamps (whole milliseconds or more: ext4 with 128-byte inodes, ext3, vfat): a write in the tick of the state's record would leave them as recorded", nil
	}
	return "", nil
}

// coarseTick is the finest timestamp granularity marks are not trusted
// at: a filesystem whose stamps are whole seconds (ext4 with 128-byte
// inodes, ext3), 2 s (vfat) or 10 ms (exFAT) gives a write in the same
// tick as the state's record the same mtime and ctime. Fine stamps are
// both multiples of it by chance once in 10^12.
const coarseTick = int64(time.Millisecond)

// coarse says that both timestamps of the marks are whole ticks.
func (m marks) coarse() bool {
	return m.Mtime%coarseTick == 0 && m.Ctime%coarseTick == 0
}

// srcUnmarked says why SRC may have changed since the state was recorded
// although its identity is the same, or "": a block device that is no
// loop device over a file (a disk, a loop device over another device)
// keeps no marks, and coarse ones may hide a write, so DST's unchanged
// marks say nothing of SRC's prefix.
func srcUnmarked(src identity) string {
	switch {
	case src.Kind == kindBlock && src.Marks == nil:
		return "SRC is a block device that keeps no marks of its writes (no loop device over a file): it may have changed there"
	case src.Marks != nil && src.Marks.coarse():
		return "SRC's filesystem keeps coarse timestamps: a write in the tick its marks were read in would leave them as recorded"
	}
	return ""
}

// compareDone compares the prefix of DST with SRC's, stopping at the
// first difference, which refuses the copy.
func (p *Plan) compareDone(ctx context.Context, a *acquired) error {
	r := p.resume
	progress := p.opts.Progress
	progress.SetPhase(engine.PhaseVerify)
	defer func() {
		progress.Verified.Store(0) // a --verify pass counts from 0
		progress.SetPhase(engine.PhaseCopy)
	}()
	// From the device, as --verify reads: a page cache of DST that
	// predates a write beneath it (a loop device's backing file written
	// directly) would show the old bytes.
	if _, err := a.dst.readBack(p); err != nil {
		return err
	}
	cmp := &firstDiffer{cmp: newComparer(0, progress), later: map[int64]int64{}}
	err := p.comparePass(ctx, a, r.from, cmp.check)
	again := fmt.Sprintf("; remove %s to start over", r.statePath)
	switch {
	case cmp.cmp.first >= 0:
		at := p.opts.DstOffset + cmp.cmp.first
		if b, ok := a.dst.(backedTarget); ok {
			if path := b.fromBacking(at); path != "" {
				return refuse(KindChanged, path, fmt.Sprintf("DST's backing file changed since the earlier run (replaced or written): %s stores nothing at offset %d and reads the backing file there, which differs from SRC now, in the first %s of the copy, which the resume state records as copied; give the backing file back as it was, or remove %s to start over",
					p.dst.path, at, units.Format(r.from), r.statePath)).on("Qcow2.Backing")
			}
		}
		return refuse(KindChanged, p.dst.path, fmt.Sprintf("changed since the earlier run: it differs from SRC at offset %d, in the first %s of the copy, which the resume state records as copied%s",
			at, units.Format(r.from), again))
	case errors.Is(err, engine.ErrEndedEarly):
		return refuse(KindChanged, p.dst.path, fmt.Sprintf("changed since the earlier run: it ends before the %s the resume state records as copied%s", units.Format(r.from), again))
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted while comparing the part an earlier run copied with SRC: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("compare the part an earlier run copied with SRC: %w", err)
	}
	return nil
}

// backedTarget is a DST that reads another file where it stores nothing
// (a qcow2 image over a backing file): a difference found there in the
// part an earlier run copied is that file's, not DST's.
type backedTarget interface {
	// fromBacking is the path of the file DST reads at off, or "" when
	// DST stores that byte itself.
	fromBacking(off int64) string
}

// firstDiffer compares, and stops the pass once the first differing byte
// is known: every chunk before it was checked (chunks complete in any
// order). A DST that is another disk altogether is refused after a block
// or two, not after reading it all.
type firstDiffer struct {
	cmp   *comparer
	upTo  int64           // every byte before upTo was checked
	later map[int64]int64 // chunks checked past a gap: offset -> length
}

func (f *firstDiffer) check(rel int64, src, dst []byte) error {
	f.cmp.check(rel, src, dst)
	f.later[rel] = int64(len(src))
	for n, ok := f.later[f.upTo]; ok; n, ok = f.later[f.upTo] {
		delete(f.later, f.upTo)
		f.upTo += n
	}
	if f.cmp.first >= 0 && f.upTo > f.cmp.first {
		return errPrefixDiffers
	}
	return nil
}
