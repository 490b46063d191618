package copier

// A copy that is not resumable and writes an existing file DST voids the
// resume state kept beside it (DST.ringcp-state) that names that file:
// the state vouches for what an earlier run wrote into DST, which this
// copy overwrites. It is removed before the first write to DST, so that a
// later --resume starts over instead of trusting it. A state kept
// elsewhere (Options.StatePath) cannot be found from here; a rerun with it
// finds DST's marks changed and compares what it records as copied with
// SRC (resumecheck_linux.go), so it is refused all the same.
func (p *Plan) voidState(rep *Report) {
	o := &p.opts
	if o.Resume {
		return
	}
	path := StatePath(o.Dst)
	st, err := loadState(path)
	if err != nil || st == nil || st.Partial != "" || st.Dst.Kind != kindFile {
		return // none, or not ringcp's to judge
	}
	// DST as Prepare found it: a file's identity names its inode; a new
	// DST has none, a device or an export another kind.
	now, err := p.dst.identity()
	if err != nil || now.Kind != kindFile || st.Dst.Dev != now.Dev || st.Dst.Ino != now.Ino {
		return // another DST's
	}
	if err := removeState(path); err != nil {
		rep.note("the resume state %s records a copy into DST, which this copy overwrites, and could not be removed: %v", path, err)
		return
	}
	rep.note("removed the resume state %s: it recorded a copy into DST, which this copy overwrites", path)
}
