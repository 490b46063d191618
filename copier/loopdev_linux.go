package copier

import "github.com/ringcp/ringcp/internal/sysblock"

// loopDev is a bound loop device and what backs it.
type loopDev struct{ sysblock.Loop }

// backingObject is the object a loop device shows bytes of.
func backingObject(b sysblock.Backing) object {
	if b.Rdev != 0 {
		return object{block: true, rdev: b.Rdev}
	}
	return object{dev: b.Dev, ino: b.Ino}
}

// window is the part of the backing the loop device shows.
func (l loopDev) window() span {
	s := span{obj: backingObject(l.Backing), off: l.Offset, end: -1, label: l.File, via: viaLoop}
	if l.Size > 0 {
		s.end = l.Offset + l.Size
	}
	return s
}

// boundLoops lists every loop device with something attached.
func boundLoops() []loopDev {
	var out []loopDev
	for _, l := range sysblock.BoundLoops() {
		out = append(out, loopDev{l})
	}
	return out
}

// loopOf says what backs b when b is a bound loop device.
func loopOf(b sysblock.Dev) (loopDev, bool) {
	l, ok := sysblock.LoopOf(b)
	return loopDev{l}, ok
}
