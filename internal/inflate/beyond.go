package inflate

import (
	"errors"
	"fmt"
)

// beyond reads on past a full dst as zlib does, so that Decode fails
// exactly where QEMU's qcow2_zlib_decompress does: zlib's one inflate
// call stops only at the next literal or match, at the end of the input,
// or after the last block, and fails on what it finds malformed before
// (an unused code, the next block's header). t is the block being read
// (nil between blocks), final whether it is the last. A match or stored
// block that went on past dst's end stops zlib at once.
func (d *decoder) beyond(t *tables, final bool) error {
	if d.cut {
		return d.more()
	}
	err := d.toNextSymbol(t, final)
	if d.r.overrun() || errors.Is(err, errTruncated) {
		if d.whole {
			return errTruncated
		}
		return nil // zlib would wait for more input: success, dst is full
	}
	if err != nil && err != ErrLong {
		return fmt.Errorf("%w (%w)", err, errBeyond)
	}
	return err
}

// more is what data past a full dst means: the end of Decode's work, a
// failure of DecodeWhole's.
func (d *decoder) more() error {
	if d.whole {
		return ErrLong
	}
	return nil
}

// toNextSymbol reads on from a full dst to the next literal or match, or
// to the stream's end, across block ends and block headers.
func (d *decoder) toNextSymbol(t *tables, final bool) error {
	for {
		if t != nil {
			ended, err := d.peekSymbol(t)
			if err != nil || d.r.overrun() {
				return err
			}
			if !ended {
				return d.more()
			}
		}
		if final {
			return nil
		}
		h, err := d.r.read(3)
		if err != nil || d.r.overrun() {
			return err
		}
		final, t = h&1 == 1, nil
		switch h >> 1 {
		case 0:
			n, err := d.storedLen()
			if err != nil {
				return err
			}
			if n > 0 {
				return d.more()
			}
		case 1:
			t = fixedTables()
		case 2:
			if err := d.readDynamic(); err != nil {
				return err
			}
			t = &d.dyn
		default:
			return errBlockType
		}
	}
}

// peekSymbol reads the next literal/length code, a length's extra bits
// and its distance code (not the distance's extra bits: zlib stops
// before them), and says whether it was the block's end. It consumes
// each code's bits before judging it, as zlib needs them all in hand.
func (d *decoder) peekSymbol(t *tables) (ended bool, err error) {
	r := &d.r
	if err := r.refill(); err != nil {
		return false, err
	}
	e := lookup(r, t.lit[:], litBits)
	switch {
	case e&flagBad != 0:
		return false, errCode
	case e&flagLiteral != 0:
		return false, nil
	case e&flagEnd != 0:
		return true, nil
	}
	r.skip(uint(e&0xff - e>>8&15))
	if e = lookup(r, t.dist[:], distBits); e&flagBad != 0 {
		return false, errCode
	}
	return false, nil
}

// lookup finds the entry of the code r holds next and consumes the
// code's bits (not its extra bits).
func lookup(r *bitReader, table []uint32, tableBits uint) uint32 {
	e := table[r.bits&(1<<tableBits-1)]
	if e&flagSub != 0 {
		r.skip(tableBits)
		e = table[e>>16+uint32(r.bits)&(1<<(e>>8&15)-1)]
	}
	r.skip(uint(e >> 8 & 15))
	return e
}
