package qcow2

import "fmt"

// Kind is what a run of guest bytes is, through the whole chain.
type Kind uint8

const (
	// KindData is data in the image or in a backing file (compressed or
	// not): it must be read.
	KindData Kind = iota + 1
	// KindZero reads as zeros because a layer says so (a zero cluster or
	// subcluster).
	KindZero
	// KindHole reads as zeros because no layer has it: unallocated in
	// the whole chain, past the end of a shorter backing file, or a hole
	// of a raw backing file.
	KindHole
)

func (k Kind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindZero:
		return "zero"
	case KindHole:
		return "hole"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Extent is a run of guest bytes of one Kind.
type Extent struct {
	Off, Len int64
	Kind     Kind
}

// Extent is the run of one kind that starts at off, ending at end at the
// latest (end is clipped to Size). Two calls may return neighbours of one
// kind (a run of data of this image, then of its backing file).
func (im *Image) Extent(off, end int64) (Extent, error) {
	end = min(end, im.size)
	if off < 0 || off >= end {
		return Extent{Off: off}, nil
	}
	var first run
	err := im.runs(off, end, func(r run) (bool, error) {
		if first.n == 0 {
			first = r
			// A data run whose host bytes may be holes ends here: see
			// hostExtent.
			return r.kind != runData || im.dataMapper == nil, nil
		}
		if sameKind(first.kind, r.kind) && first.kind != runUnalloc {
			first.n += r.n
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return Extent{}, err
	}
	switch first.kind {
	case runZero:
		return Extent{Off: off, Len: first.n, Kind: KindZero}, nil
	case runData:
		return im.hostExtent(first)
	case runCompressed:
		return Extent{Off: off, Len: first.n, Kind: KindData}, nil
	}
	return im.backingExtent(off, off+first.n)
}

// hostExtent is the extent at the start of a data run: data, or zeros
// where its host bytes are a hole of the host file (never written: a
// preallocated cluster, or zeros QEMU punched), as QEMU's block status
// reports them.
func (im *Image) hostExtent(r run) (Extent, error) {
	data := Extent{Off: r.off, Len: r.n, Kind: KindData}
	if im.dataMapper == nil {
		return data, nil
	}
	end := min(r.host+r.n, im.dataSize)
	if r.host >= end {
		return Extent{Off: r.off, Len: r.n, Kind: KindZero}, nil // past the data file's end
	}
	start, stop, err := im.dataMapper.Data(r.host, end)
	switch {
	case err != nil || start < r.host || stop > end || start > stop:
		return data, nil // it cannot tell: data
	case start > r.host:
		return Extent{Off: r.off, Len: start - r.host, Kind: KindZero}, nil
	case stop > start:
		return Extent{Off: r.off, Len: stop - r.host, Kind: KindData}, nil
	}
	return data, nil
}

// sameKind: data and compressed runs are both data.
func sameKind(a, b runKind) bool {
	data := func(k runKind) bool { return k == runData || k == runCompressed }
	return a == b || data(a) && data(b)
}

// backingExtent is the extent at off of what the backing file has for an
// unallocated run [off, end).
func (im *Image) backingExtent(off, end int64) (Extent, error) {
	if im.backing == nil || off >= im.backing.Size() {
		return Extent{Off: off, Len: end - off, Kind: KindHole}, nil
	}
	e, err := im.backing.Extent(off, min(end, im.backing.Size()))
	if err != nil {
		return Extent{}, err
	}
	if e.Len <= 0 { // a layer that cannot move on: take the rest as data
		e = Extent{Off: off, Len: end - off, Kind: KindData}
	}
	return e, nil
}

// Data finds the first run of data at or after off, before end, as
// engine.Endpoint.Data wants it: [start, stop), where start == stop ==
// end says there is none. Zero and hole runs (KindZero, KindHole) are not
// data: they read as zeros.
func (im *Image) Data(off, end int64) (start, stop int64, err error) {
	end = min(end, im.size)
	for off < end {
		e, err := im.Extent(off, end)
		if err != nil {
			return 0, 0, err
		}
		if e.Kind == KindData {
			start, stop = e.Off, e.Off+e.Len
			for stop < end {
				next, err := im.Extent(stop, end)
				if err != nil || next.Kind != KindData {
					return start, stop, err
				}
				stop += next.Len
			}
			return start, stop, nil
		}
		off += e.Len
	}
	return end, end, nil
}

// Map is every extent of [off, end), neighbours of one kind merged. Its
// length grows with how fragmented the image is: callers that walk a
// large image use Extent or Data.
func (im *Image) Map(off, end int64) ([]Extent, error) {
	end = min(end, im.size)
	var out []Extent
	for off < end {
		e, err := im.Extent(off, end)
		if err != nil {
			return nil, err
		}
		if n := len(out); n > 0 && out[n-1].Kind == e.Kind {
			out[n-1].Len += e.Len
		} else {
			out = append(out, e)
		}
		off += e.Len
	}
	return out, nil
}

// FromBacking says whether the guest byte at off is read from the
// backing file: the image itself stores nothing there (no data, no zero
// cluster). False for an image without a backing file.
func (im *Image) FromBacking(off int64) (bool, error) {
	if im.backing == nil || off < 0 || off >= im.size {
		return false, nil
	}
	from := false
	err := im.runs(off, off+1, func(r run) (bool, error) {
		from = r.kind == runUnalloc
		return false, nil
	})
	return from, err
}
