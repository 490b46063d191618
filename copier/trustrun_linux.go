package copier

import (
	"context"
	"errors"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// trustRun is what a verifying, checksumming or resumable copy keeps
// while it runs: the observers of its data and barriers.
type trustRun struct {
	from    int64 // where in the range this run starts (resumed)
	digests *digests
	sum     BlockSum
	state   *stateWriter
	// made: this run wrote the state file first (begin), which no
	// earlier run had; a run that never starts removes it (forget).
	made bool
	// zeros: what an NBD SRC's map called zeros, which --verify reads
	// from SRC to check (srczeros_linux.go).
	zeros *zeroRanges
}

// newTrust makes the observers the options ask for and shapes the job:
// the cell grid, periodic barriers, and for a resumed copy the range from
// where the earlier run stopped. Nothing is written yet.
func (p *Plan) newTrust(job *engine.Job) *trustRun {
	o := &p.opts
	if !o.Verify && o.Checksum == nil && !o.Resume {
		return nil
	}
	t := &trustRun{}
	var obs []engine.Observer
	if o.Verify && !p.verifiesRanges() { // a restricted copy compares its ranges instead (verify_ranges_linux.go)
		t.digests = newDigests(p.Length)
		obs = append(obs, t.digests)
		if !p.src.readBackMaps && p.sparse.MapHoles { // an NBD SRC's block status
			t.zeros = &zeroRanges{}
			obs = append(obs, t.zeros)
		}
	}
	if o.Checksum != nil {
		t.sum = o.Checksum(p.Length)
		obs = append(obs, sumObserver{t.sum})
	}
	if o.Verify || o.Checksum != nil {
		job.Grid = CellSize
	}
	if r := p.resume; r != nil {
		t.from = r.from
		if p.meter != nil {
			p.meter.doneBefore(r.from) // first: no sample sees it as this run's rate
		}
		o.Progress.Done.Add(r.from) // done by an earlier run: the progress line starts there
		t.state = &stateWriter{path: r.statePath}
		obs = append(obs, t.state)
		job.SyncEvery = o.SyncEvery
		if job.SyncEvery <= 0 {
			job.SyncEvery = DefaultSyncEvery
		}
	}
	job.Observer = &shifted{by: t.from, next: obs}
	if t.from < job.Length {
		job.SrcOff, job.DstOff = job.SrcOff+t.from, job.DstOff+t.from
	} // else nothing is left: the offsets stay aligned, the length is 0
	job.Length -= t.from
	return t
}

// sumObserver feeds the checksum with what the copy reads.
type sumObserver struct{ s BlockSum }

func (o sumObserver) Data(rel int64, data []byte) { o.s.Data(rel, data) }
func (o sumObserver) Hole(rel, n int64)           { o.s.Zero(rel, n) }
func (o sumObserver) Durable(int64)               {}

// begin is the last step of acquiring: a resumable copy that starts
// records SRC, DST (its partial file, for a new one), the range and the
// size policy in its state file before anything is written, so that a run
// after a kill knows DST is this copy's.
func (t *trustRun) begin(p *Plan, d target) error {
	if t == nil || t.state == nil {
		return nil
	}
	r := p.resume
	if r.dst.Kind == "" { // a new DST: its identity is its new inode's
		id, err := d.identity(p)
		if err != nil {
			return err
		}
		r.dst = id
	}
	t.state.marks = func() *marks { return dstMarks(d.held().f, r.dst) }
	st := r.state
	if st == nil {
		st = &resumeState{Format: stateFormat, Src: r.src, Dst: r.dst, SrcOffset: p.opts.SrcOffset,
			DstOffset: p.opts.DstOffset, Length: p.Length, OwnsSize: r.owns, Image: p.opts.imageKey(), BlockSize: p.BlockSize,
			DstMarks: t.state.marksNow()}
		if r.newDst {
			st.Partial, st.Dst.Path = newFileKey(r.partial), p.opts.Dst
		}
		if err := writeState(r.statePath, st); err != nil {
			return refuseErr(KindResources, r.statePath, "cannot record the copy's progress", err)
		}
		t.made = true
	}
	d.keep(true)
	t.state.start(*st)
	return nil
}

// close stops what runs beside the copy; after a failure, the state file
// keeps the last prefix made durable.
func (t *trustRun) close() {
	if t == nil {
		return
	}
	if t.sum != nil {
		t.sum.Close()
	}
	if t.state != nil {
		t.state.stop()
	}
}

// forget undoes begin for a copy that acquired and then never ran (a
// batch another job's refusal stopped): a state file this run made is
// removed, and with it the reason to keep a new DST's partial file, which
// holds nothing. A state an earlier run made is kept, with what it
// records.
func (t *trustRun) forget(p *Plan, d target) error {
	if t == nil || !t.made {
		return nil
	}
	t.close() // no barrier write may recreate the file
	if d != nil {
		d.keep(false)
	}
	return removeState(p.resume.statePath)
}

// finishTrust runs once the copy is complete and synced, before a new DST
// gets its name: the state records the whole range, the checksum is
// completed (reading what an earlier run copied, when resumed), and DST is
// verified. A verification that finds a bad block rewinds the state to
// it, so that the next run copies from there.
func (p *Plan) finishTrust(ctx context.Context, a *acquired, rep *Report) error {
	t := a.trust
	if t == nil {
		return nil
	}
	// The copy's backend goes before the read passes set up theirs.
	if err := a.copy.Close(); err != nil {
		return err
	}
	if t.state != nil {
		if _, err := t.state.stop(); err != nil {
			rep.note("resume state: %v", err)
		}
	}
	if t.sum != nil {
		if err := p.finishChecksum(ctx, a, t, rep); err != nil {
			return err
		}
	}
	if p.verifiesRanges() {
		return p.verifyRanges(ctx, a, rep)
	}
	if t.digests == nil {
		return nil
	}
	err := p.verify(ctx, a, t, rep)
	var mm *MismatchError
	if errors.As(err, &mm) && t.state != nil {
		if rerr := t.state.rewind(resumePoint(mm.RangeOff, p.Length)); rerr != nil {
			rep.note("resume state: %v", rerr)
		}
	}
	return err
}

// finishChecksum completes SRC's checksum: a resumed copy reads the part
// an earlier run copied (its holes are not read) and adds it.
func (p *Plan) finishChecksum(ctx context.Context, a *acquired, t *trustRun, rep *Report) error {
	if t.from > 0 {
		h := sumObserver{t.sum}
		job := a.passJob(p, t.from, func(rel int64, src, _ []byte) error { h.Data(rel, src); return nil })
		a.src.into(&job, engine.FileSrc)
		job.SrcOff, job.SrcAlign = p.opts.SrcOffset, a.src.align
		job.MapHoles, job.Observer = p.src.mapsHoles, holesOnly{h}
		if _, err := p.readPass(ctx, job); err != nil {
			return err
		}
	}
	sum, err := t.sum.Sum()
	if err != nil {
		return err
	}
	rep.Checksum = &sum
	return nil
}

// holesOnly passes on a read pass's holes; its data goes to Check.
type holesOnly struct{ next engine.Observer }

func (o holesOnly) Data(int64, []byte) {}
func (o holesOnly) Hole(rel, n int64)  { o.next.Hole(rel, n) }
func (o holesOnly) Durable(int64)      {}

// endTrust ends a resumable copy: its state is removed once DST is
// complete (and named), or SRC changed while it was read (dropResume),
// and kept otherwise, saying where the next run starts.
func (p *Plan) endTrust(a *acquired, rep *Report, err error) {
	t := a.trust
	if t == nil {
		return
	}
	t.close()
	if t.state == nil {
		return
	}
	if sc := p.changedSrc(a, err); sc != nil {
		p.dropResume(a, rep, sc)
		return
	}
	rep.StatePath = p.resume.statePath
	if err != nil {
		if f := a.dst.held().f; !a.undrained && f != nil {
			// Nothing writes DST any more: its marks now let a rerun
			// trust the prefix without reading it.
			t.state.settle(func() error { return unix.Fsync(int(f.Fd())) })
		}
		rep.ResumeFrom = resumePoint(t.state.recorded(), p.Length)
		if p.resume.newDst {
			rep.PartialPath = p.resume.partial
		}
		return
	}
	if rerr := removeState(rep.StatePath); rerr != nil {
		rep.note("%v", rerr)
	}
}

// trustOutcome corrects what a stopped copy says of DST: a resumable one
// is kept for the next run, and one that verification found different,
// or written from a SRC that changed, is not to be used.
func (p *Plan) trustOutcome(state DstState, d target, err error) DstState {
	var mm *MismatchError
	sc := srcChangedIn(err)
	switch {
	case state == DstComplete || state == DstChanging || state == DstUnknown || state == DstDiscarded || state == DstUntouched:
		return state
	case sc != nil:
		// All of it written, from a SRC that changed meanwhile: no part
		// of it is a copy to keep or to resume from, and the error says
		// DST holds the mix.
		sc.Mixed = true
		return DstMixed
	case p.resume != nil && d.kept():
		return DstResumable
	case errors.As(err, &mm):
		return DstMismatch
	}
	return state
}
