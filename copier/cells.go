package copier

// cellTable keeps one value per cell of a range, 0 by default, in pages
// made as cells are set: a copy of a 16 TiB disk holds 32 MiB of digests,
// a sparse image only pages where it has data.
type cellTable struct {
	pages map[int64]*cellPage
}

const cellsPerPage = 512 // 4 KiB of values, 2 GiB of range

type cellPage [cellsPerPage]uint64

func (t *cellTable) get(i int64) uint64 {
	if pg := t.pages[i/cellsPerPage]; pg != nil {
		return pg[i%cellsPerPage]
	}
	return 0
}

func (t *cellTable) set(i int64, v uint64) {
	pg := t.pages[i/cellsPerPage]
	if pg == nil {
		if v == 0 {
			return
		}
		if t.pages == nil {
			t.pages = map[int64]*cellPage{}
		}
		pg = new(cellPage)
		t.pages[i/cellsPerPage] = pg
	}
	pg[i%cellsPerPage] = v
}

// nonZero calls fn for every cell in [from, to) whose value is not 0, in
// no particular order. It visits the pages in the range, or every page
// when there are fewer of those: a hole of terabytes costs what the table
// holds, not what the hole spans.
func (t *cellTable) nonZero(from, to int64, fn func(i int64)) {
	first, last := from/cellsPerPage, (to-1)/cellsPerPage
	visit := func(p int64, pg *cellPage) {
		for k, v := range pg {
			if i := p*cellsPerPage + int64(k); v != 0 && i >= from && i < to {
				fn(i)
			}
		}
	}
	if to <= from {
		return
	}
	if last-first+1 <= int64(len(t.pages)) {
		for p := first; p <= last; p++ {
			if pg := t.pages[p]; pg != nil {
				visit(p, pg)
			}
		}
		return
	}
	for p, pg := range t.pages {
		if p >= first && p <= last {
			visit(p, pg)
		}
	}
}
