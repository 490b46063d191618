package copier

import (
	"errors"
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/qcow2"
)

// A resumable copy into a new qcow2 image (Options.Resume with
// Options.DstFormat qcow2) writes it under the partial name as any new
// DST (end_file_resume_linux.go), with a qcow2.Writer that keeps the file
// a valid image at every instant: each periodic barrier is a checkpoint
// (qcow2.Writer.Checkpoint: fresh tables, synced, then the header
// switched to them in one sector, synced), so that the state's prefix is
// always part of the image on disk, and `qemu-img check` finds a partial
// image clean wherever the copy was stopped. A rerun reopens it
// (qcow2.Resume), keeps the clusters below the resume point and writes
// the rest again; the part an earlier run copied is checked as for a raw
// DST (resumecheck_linux.go), through the image's reader: the guest's
// bytes, its backing file's included, against SRC's.
//
// The resume point is a whole cell of the range, and with the range
// starting on a cluster boundary (checkQcow2), a whole cluster of the
// image: a cluster the prefix covers in part may still have been in
// memory (compressed, or over a backing file) when the barrier ran.

// imagePoint is where a resumed copy into a new image starts: the
// recorded prefix down to a whole cell, even when it is the whole range
// (whose last cluster may have waited in memory for Close, past the
// last barrier).
func imagePoint(done, length int64) int64 {
	return align.RoundDown(min(max(done, 0), length), CellSize)
}

// startImage makes the image on DST's new file, or takes up the one an
// earlier run left under the partial name; resumed says which.
func (d *imageDst) startImage(p *Plan, f imageFile, opt qcow2.WriterOptions) (*qcow2.Writer, bool, error) {
	r := p.resume
	if r == nil || r.state == nil || r.from == 0 || !r.newDst {
		w, err := qcow2.Create(f, opt)
		if err != nil {
			return nil, false, refuseErr(KindBadInput, d.ep.path, "cannot make the image", err).on("Qcow2")
		}
		return w, false, nil
	}
	w, err := qcow2.Resume(f, opt, p.opts.DstOffset+r.from)
	if errors.Is(err, qcow2.ErrNotResumable) {
		return nil, false, refuseErr(KindChanged, d.ep.path, fmt.Sprintf("is not the image the resume state %s records an earlier run making; remove it and the state to start over", r.statePath), err).on("Dst")
	}
	if err != nil {
		return nil, false, fmt.Errorf("take up the image an earlier run began: %w", err)
	}
	return w, true, nil
}

// proved ends the check of the part an earlier run copied: the image is
// written from now on, and read back only once finished.
func (t *imageTarget) proved() {
	if t.x.read != nil {
		t.x.read.Close()
		t.x.read = nil
	}
	t.x.proven = true
}

// fromBacking: the backing file's path when the image, as read back for
// the check of the part an earlier run copied, stores nothing at off.
func (t *imageTarget) fromBacking(off int64) string {
	if t.x.read == nil || t.backing.close == nil {
		return ""
	}
	if from, err := t.x.read.FromBacking(off); err != nil || !from {
		return ""
	}
	return t.backing.path
}
