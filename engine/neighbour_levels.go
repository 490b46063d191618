package engine

// neighbourLevels are the windows, each about twice the bytes of the one
// before: one request of neighbourMinRequest doubling to half a MiB (a
// foreground read waits behind one request, not several), then two
// requests growing to whole blocks, then a block more at a time up to
// every slot. A request is a multiple of unit, at most a block.
func neighbourLevels(slots, block, unit int) []Window {
	var levels []Window
	add := func(w Window) {
		if w.Request >= block {
			w.Request = 0 // a whole block
		}
		if len(levels) == 0 || levelBytes(w, block) > levelBytes(levels[len(levels)-1], block) {
			levels = append(levels, w)
		}
	}
	r := min(block, max(unit, alignDown(neighbourMinRequest, unit)))
	for ; ; r = min(2*r, block) {
		add(Window{Depth: 1, Request: r})
		if r >= block || slots > 1 && 2*r >= neighbourStart {
			break
		}
	}
	if slots == 1 {
		return levels
	}
	for ; ; r = min(2*r, block) {
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
