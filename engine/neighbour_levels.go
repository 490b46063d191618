package engine

// neighbourLevels are the windows, fewest bytes first: one request of
// neighbourMinRequest growing by half-steps (x1.5, then x4/3: a window
// halfway between two doublings, which the search needs where one
// request more or less is a large share of the copy's speed) up to
// neighbourOneMost (a foreground read waits behind one request, not
// several), then two requests doubling to whole blocks, then a block more
// at a time up to every slot. A request is a multiple of unit, at most a
// block.
func neighbourLevels(slots, block, unit int) []Window {
	var levels []Window
	add := func(w Window) {
		w.Request = min(w.Request, block)
		if w.Request >= block {
			w.Request = 0 // a whole block
		}
		if len(levels) == 0 || levelBytes(w, block) > levelBytes(levels[len(levels)-1], block) {
			levels = append(levels, w)
		}
	}
	one := block // one request up to a block
	if slots > 1 {
		// A multiple of the unit: the caller's block size, given as the
		// unit, may be over a MiB or not a power of two.
		one = min(block, max(unit, alignDown(neighbourOneMost, unit)))
	}
	r := min(block, max(unit, alignDown(neighbourMinRequest, unit)))
	for ; r < one; r *= 2 {
		add(Window{Depth: 1, Request: r})
		if half := alignDown(r+r/2, unit); half < one {
			add(Window{Depth: 1, Request: half})
		}
	}
	add(Window{Depth: 1, Request: one})
	if slots == 1 {
		return levels
	}
	for r = max(unit, alignDown(one/2, unit)); ; r = min(2*r, block) {
		add(Window{Depth: 2, Request: r})
		if r >= block {
			break
		}
	}
	for d := 3; d <= slots; d++ {
		add(Window{Depth: d})
	}
	return levels
}

func levelBytes(w Window, block int) int {
	if w.Request > 0 {
		return w.Depth * w.Request
	}
	return w.Depth * block
}
