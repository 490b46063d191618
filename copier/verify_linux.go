package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/eintr"
	"golang.org/x/sys/unix"
)

// The read-back verification (Options.Verify) runs after the barrier: DST's
// range is read again through the engine, with the copy's block size and
// queue depth, and each 4 MiB cell is checked against the digest taken
// from SRC as the copy read it (digest.go). A resumed copy did not read
// the part an earlier run copied: that part is compared with SRC itself,
// both read side by side.
//
// The reads must come from the device, not from the page cache, which
// may hold what ringcp wrote rather than what reached the disk. O_DIRECT
// bypasses the cache; it is switched back on for the pass where the copy
// used it (the engine switches it off for an unaligned last block). Where
// DST is read buffered (--direct never, a filesystem without O_DIRECT,
// FUSE), the range is fdatasync'ed, so that no page is dirty, and then
// dropped from the cache with posix_fadvise(POSIX_FADV_DONTNEED), which
// evicts clean pages: the reads that follow go to the device (for FUSE,
// to the server; for NFS, to the server). Both are done in either case: a
// buffered tail's page is dropped too.
//
// An NBD DST is read back from its server after the FLUSH: what the server
// serves now, every byte of the range read (its block status is not
// trusted to say where zeros are). What its own cache holds is the
// server's to keep honest, as for any NBD client. An NBD SRC is read again
// only to find the first differing byte.

// dstAccess is how DST is opened: read-write when it is read back, or
// when a resumed copy may compare what an earlier run copied, or a
// sync reads it to compare.
func (p *Plan) dstAccess() int {
	if p.opts.Verify || p.opts.Resume || p.changed.syncing {
		return os.O_RDWR
	}
	return os.O_WRONLY
}

// verify reads DST's range back and checks it: against the digests from
// `from` on, against SRC before (what an earlier run copied). It returns
// a *MismatchError when DST differs.
func (p *Plan) verify(ctx context.Context, a *acquired, t *trustRun, rep *Report) error {
	want, from := t.digests, t.from
	start := time.Now()
	progress := p.opts.Progress // normalize made one
	progress.SetPhase(engine.PhaseVerify)
	how, err := a.dst.readBack(p)
	if err != nil {
		return err
	}
	bad := newBadCells()
	cmp := newComparer(0, progress)
	cmp.bad = bad
	if from > 0 {
		if err := p.comparePass(ctx, a, from, cmp.check); err != nil {
			return err
		}
	}
	v := &verifier{want: want, from: from, bad: bad, progress: progress}
	if from < p.Length {
		if err := p.digestPass(ctx, a, v); err != nil {
			return err
		}
	}
	var lies int64
	if t.zeros != nil {
		if lies, err = p.checkSrcZeros(ctx, a, t.zeros, bad); err != nil {
			return err
		}
	}
	rep.Verify = &VerifyReport{Bytes: p.Length, Seconds: time.Since(start).Seconds(), BadBlocks: bad.count, FirstBad: -1, How: how}
	if t.zeros != nil {
		rep.Verify.SrcZerosRead = t.zeros.bytes()
	}
	if bad.count == 0 {
		return nil
	}
	err = p.mismatch(a, bad, cmp.first, rep.Verify)
	var mm *MismatchError
	if lies > 0 && errors.As(err, &mm) {
		mm.Detail = strings.TrimPrefix(mm.Detail+fmt.Sprintf("; in %d of them SRC's NBD block status said zeros, but SRC reads otherwise: DST holds the zeros its server claimed", lies), "; ")
	}
	return err
}

// comparePass compares the first n bytes of the range, SRC and DST read
// side by side, with check.
func (p *Plan) comparePass(ctx context.Context, a *acquired, n int64, check engine.CheckFunc) error {
	job := a.passJob(p, n, check)
	a.src.into(&job, engine.FileSrc)
	a.dst.held().into(&job, engine.FileDst)
	job.SrcOff, job.DstOff = p.opts.SrcOffset, p.opts.DstOffset
	job.SrcAlign, job.DstAlign = a.src.align, a.dst.held().align
	_, err := p.readPass(ctx, job)
	return err
}

// digestPass reads DST from v.from to the end of the range, alone; a
// file's holes are not read (they are zeros, which v checks).
func (p *Plan) digestPass(ctx context.Context, a *acquired, v *verifier) error {
	job := a.passJob(p, p.Length-v.from, v.check)
	a.dst.held().into(&job, engine.FileSrc)
	job.SrcOff, job.SrcAlign = p.opts.DstOffset+v.from, a.dst.held().align
	job.MapHoles, job.Observer = p.dst.readBackMaps, v
	_, err := p.readPass(ctx, job)
	if errors.Is(err, engine.ErrEndedEarly) {
		return &MismatchError{Path: p.dst.path, Offset: p.opts.DstOffset + p.Length, RangeOff: p.Length,
			BadBlocks: 1, Blocks: cells(p.Length), Detail: fmt.Sprintf("DST ends before the copy does (%v)", err)}
	}
	return err
}

// mismatch builds the error for a verification that found bad cells,
// with the first differing byte: exact when SRC was read again beside DST
// (a resumed part), else found by reading the first bad cell of both.
func (p *Plan) mismatch(a *acquired, bad *badCells, cmpFirst int64, vr *VerifyReport) error {
	e := &MismatchError{Path: p.dst.path, BadBlocks: bad.count, Blocks: cells(p.Length)}
	cell := bad.first * CellSize
	switch {
	case cmpFirst >= 0 && cmpFirst/CellSize == bad.first:
		e.RangeOff = cmpFirst
	default:
		off, same, err := p.firstDiffIn(a, cell)
		e.RangeOff = off
		if err != nil {
			e.Detail = fmt.Sprintf("the block was not read again to find the byte: %v", err)
		} else if same {
			e.Detail = "SRC now reads as DST does in that block: SRC changed during the copy, or a read of SRC returned wrong data"
		}
	}
	e.Offset = p.opts.DstOffset + e.RangeOff
	vr.FirstBad = e.Offset
	return e
}

// firstDiffIn reads the cell at range offset cell from SRC and DST again
// and finds the first byte that differs; same says none does now.
func (p *Plan) firstDiffIn(a *acquired, cell int64) (off int64, same bool, err error) {
	n := min(CellSize, p.Length-cell)
	bufs, err := align.AllocBuffers(2, int(align.RoundUp(n, 1<<12)))
	if err != nil {
		return cell, false, err
	}
	defer bufs.Free()
	src, dst := bufs.Slots[0], bufs.Slots[1]
	if err := a.src.readFull(src, p.opts.SrcOffset+cell, n); err != nil {
		return cell, false, err
	}
	if err := a.dst.held().readFull(dst, p.opts.DstOffset+cell, n); err != nil {
		return cell, false, err
	}
	i := firstDiff(src[:n], dst[:n])
	if i < 0 {
		return cell, true, nil
	}
	return cell + int64(i), false, nil
}

// readFull reads n bytes at off of the end into buf (aligned, and long
// enough for n rounded up to the end's alignment): an IOEnd through its
// ReadAt, a descriptor with pread. A short count goes on from the last
// aligned byte, as O_DIRECT needs.
func (h *held) readFull(buf []byte, off, n int64) error {
	a := int64(h.align)
	want := align.RoundUp(n, a)
	name := ""
	read := func(b []byte, off int64) (int, error) { return h.io.ReadAt(b, off) }
	if h.f != nil {
		name = h.f.Name()
		read = func(b []byte, off int64) (int, error) {
			return eintr.Retry(func() (int, error) { return unix.Pread(int(h.f.Fd()), b, off) })
		}
	} else {
		name = h.io.Name()
	}
	for done := int64(0); done < n; {
		k, err := read(buf[done:want], off+done)
		if errors.Is(err, io.EOF) {
			err = nil // short at the end, as pread is at a file's
		}
		if err != nil {
			return &engine.OpError{Op: "read", Path: name, Offset: off + done, Err: err}
		}
		next := done + int64(k)
		if next < n {
			next = align.RoundDown(next, a)
		}
		if next <= done {
			return &engine.OpError{Op: "read", Path: name, Offset: off + done, Err: engine.ErrEndedEarly}
		}
		done = next
	}
	return nil
}
