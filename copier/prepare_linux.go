package copier

import "errors"

// Prepare checks opts against both ends and decides how to copy. It writes
// nothing: every refusal is a *RefusedError.
func Prepare(opts Options) (*Plan, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	p := &Plan{opts: opts}
	if err := p.prepare(); err != nil {
		p.Close() // the connections to NBD ends
		return nil, p.withLength(err)
	}
	p.meter = newMeter(p.opts.Progress, p.workLength())
	if p.src.openEnded {
		p.meter.total = -1 // not known before SRC ends
	}
	return p, nil
}

// withLength adds the range's length to a refusal that came after it was
// measured: a caller reporting the refusal knows what was asked.
func (p *Plan) withLength(err error) error {
	var r *RefusedError
	if errors.As(err, &r) && r.Length == 0 {
		r.Length = p.Length
	}
	return err
}

// prepare runs Prepare's steps in order: look at both ends, check
// everything, then decide.
func (p *Plan) prepare() error {
	steps := []func() error{p.inspectEnds, p.checkEndsAlone, p.checkRange, p.checkChanged, p.checkResume, p.checkSameObject, p.checkEnds, p.checkExpect, p.checkDestSize,
		p.chooseDirect, p.findLimits, p.chooseSizes, p.chooseIOPrio, p.chooseSparse, p.chooseOffload, p.chooseChanged, p.chooseTrust, p.startGovernor, p.checkSpace, p.chooseEngine}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// inspectEnds has each end's kind look at it: SRC, then DST. A kind that
// set up no resume state for a resumable copy (as a file's does beside
// it) has DST resumed in place, with a state of its own.
func (p *Plan) inspectEnds() error {
	var err error
	if p.src, err = p.inspect(p.opts.Src, roleSrc); err != nil {
		return err
	}
	if p.dst, err = p.inspect(p.opts.Dst, roleDst); err != nil {
		return err
	}
	if p.opts.Resume && p.resume == nil {
		return p.resumeInPlace("DST " + p.dst.path)
	}
	return nil
}

// inspect has the kind of operand look at it as end r.
func (p *Plan) inspect(operand string, r role) (*endpoint, error) {
	k, ok := kindOf(operand)
	if !ok {
		return nil, refuse(KindBadInput, "", "streams are not supported: SRC and DST are files or block devices (use ./- for a file named -)").on(r.field())
	}
	ep, err := k.inspect(p, operand, r)
	if err != nil {
		return ep, err
	}
	return p.withFormat(ep, r)
}

// checkEndsAlone asks each end what is wrong with it whatever the range.
func (p *Plan) checkEndsAlone() error {
	if err := p.src.checkAlone(p); err != nil {
		return err
	}
	return p.dst.checkAlone(p)
}

// checkEnds asks each end what the copy asks of it and it cannot give.
func (p *Plan) checkEnds() error {
	if err := p.src.check(p); err != nil {
		return err
	}
	return p.dst.check(p)
}
