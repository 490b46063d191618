package copier

import "golang.org/x/sys/unix"

// stopped fills in what a failed or interrupted copy left in DST and
// returns err. A new DST that did not complete is discarded here.
func (p *Plan) stopped(rep *Report, d *dest, err error) error {
	rep.DstState = p.trustOutcome(p.discardOrDescribe(d, rep), d, err)
	return err
}

// discardOrDescribe removes a new DST that did not complete, and says what
// DST holds.
func (p *Plan) discardOrDescribe(d *dest, rep *Report) DstState {
	switch {
	case d.published:
		return DstComplete // complete and named: only its folder's fsync failed
	case d.fresh != newNone:
		if d.discard() {
			return DstDiscarded
		}
		return DstPartial
	case !rep.Synced && !p.opts.NoSync:
		return DstUnknown
	case p.truncate:
		// The engine cut the file to its contiguous prefix; trust that only
		// if the size says so (the cut itself can fail).
		var st unix.Stat_t
		if unix.Fstat(int(d.f.Fd()), &st) == nil && st.Size == p.opts.DstOffset+rep.Contiguous {
			return DstPrefix
		}
	}
	return DstPartial
}
