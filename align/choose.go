package align

import "fmt"

// DefaultBlockSize is the block size Choose starts from. Large blocks
// dominate copy speed with O_DIRECT (1 MiB -> 32 MiB took a 174 GB clone
// from 13.7 to 9.8 minutes); 8 MiB gets most of that gain while 8 slots
// still fit in 64 MiB of buffers.
const DefaultBlockSize = 8 << 20

// DefaultQueueDepth is the number of blocks in flight when the caller
// does not ask for another: enough to keep a virtio or NVMe queue busy
// with 8 MiB requests, which the block layer splits further anyway.
const DefaultQueueDepth = 8

// MaxQueueDepth bounds any queue depth Choose returns. It matches the
// largest ring the engine sets up without IORING_SETUP_CLAMP surprises
// and keeps slot indexes small.
const MaxQueueDepth = 1024

// MaxChosenBlockSize is the largest block size Choose picks on its own.
// Beyond 64 MiB nothing got faster in the seeds (lfs migrate peaked
// there) while memory per slot kept growing. Only the least common
// multiple of the two ends' alignments can force a larger one.
const MaxChosenBlockSize = 64 << 20

// MaxInFlightBytes bounds QueueDepth*BlockSize, the buffer memory one
// copy keeps mapped (and pinned, when registered with io_uring).
const MaxInFlightBytes = 256 << 20

// Choice is the block size and queue depth for one copy, with the
// reasons.
type Choice struct {
	// BlockSize is the size of one read or write request in bytes.
	BlockSize int
	// QueueDepth is the number of blocks in flight (and of buffers).
	QueueDepth int
	// Why has one human line per decision, for `ringcp -v`.
	Why []string
}

// Choose picks the block size and queue depth for a copy from src to dst.
//
// wantBlockSize <= 0 means choose: DefaultBlockSize rounded up to a
// multiple of both ends' DirectAlign and of each nonzero OptimalIO (their
// least common multiple, since a RAID stripe need not be a power of two).
// An OptimalIO that would push that multiple past MaxChosenBlockSize is
// ignored as a hint (some USB bridges report a bogus 33553920); the
// alignments are not, so only they can force a block beyond it. When the
// source is known to be smaller than the block (0 < src.Size), the block
// shrinks to the source size rounded up to the same multiple. A positive
// wantBlockSize is kept as is; the caller validates it.
//
// wantQueueDepth <= 0 means DefaultQueueDepth. Either way the depth is
// clamped to MaxQueueDepth, to the number of blocks in a known-size
// source, and so that QueueDepth*BlockSize <= MaxInFlightBytes; it is
// at least 1.
func Choose(src, dst Geometry, wantBlockSize, wantQueueDepth int) Choice {
	var c Choice
	c.BlockSize = chooseBlockSize(src, dst, wantBlockSize, &c.Why)
	c.QueueDepth = chooseQueueDepth(src, c.BlockSize, wantQueueDepth, &c.Why)
	return c
}

// chooseBlockSize is Choose's first decision.
func chooseBlockSize(src, dst Geometry, want int, why *[]string) int {
	align := LCM(int64(src.DirectAlign()), int64(dst.DirectAlign()))
	*why = append(*why, fmt.Sprintf("alignment %d: lcm of DirectAlign src %d, dst %d",
		align, src.DirectAlign(), dst.DirectAlign()))
	if want > 0 {
		line := fmt.Sprintf("block size %s: given", sizeString(int64(want)))
		if !IsAligned(int64(want), align) {
			line += fmt.Sprintf(" (not a multiple of alignment %d)", align)
		}
		*why = append(*why, line)
		return want
	}
	opt := int64(0) // lcm of the optimal I/O sizes in use, 0 if none
	unit := align
	for _, end := range []struct {
		name string
		opt  int
	}{{"src", src.OptimalIO}, {"dst", dst.OptimalIO}} {
		if end.opt <= 0 {
			continue
		}
		next := LCM(unit, int64(end.opt))
		if next > MaxChosenBlockSize && next > align {
			*why = append(*why, fmt.Sprintf("optimal I/O %d of %s ignored: its lcm with %d would be %s, over %s",
				end.opt, end.name, unit, sizeString(next), sizeString(MaxChosenBlockSize)))
			continue
		}
		unit = next
		if opt == 0 {
			opt = int64(end.opt)
		} else {
			opt = LCM(opt, int64(end.opt))
		}
	}
	return roundBlockSize(src, unit, align, opt, why)
}

// roundBlockSize turns the unit (lcm of alignments and optimal I/O
// sizes) into the chosen block size and says why.
func roundBlockSize(src Geometry, unit, align, opt int64, why *[]string) int {
	bs := RoundUp(DefaultBlockSize, unit)
	because := fmt.Sprintf("a multiple of alignment %d and optimal I/O %d", align, opt)
	switch {
	case bs > MaxChosenBlockSize:
		// Only reachable when the alignments alone exceed the cap,
		// because optimal I/O sizes that would do so were dropped.
		*why = append(*why, fmt.Sprintf("block size %s: over %s because the alignments force it",
			sizeString(bs), sizeString(MaxChosenBlockSize)))
	case src.Size > 0 && src.Size <= bs-unit: // RoundUp(src.Size, unit) < bs, without rounding a size near 2^63
		bs = RoundUp(src.Size, unit)
		*why = append(*why, fmt.Sprintf("block size %s: the source is only %s, rounded up to %s",
			sizeString(bs), sizeString(src.Size), because))
	case bs == DefaultBlockSize:
		*why = append(*why, fmt.Sprintf("block size %s: default, %s", sizeString(bs), because))
	default:
		*why = append(*why, fmt.Sprintf("block size %s: default %s rounded up to %s",
			sizeString(bs), sizeString(DefaultBlockSize), because))
	}
	return int(bs)
}

// chooseQueueDepth is Choose's second decision.
func chooseQueueDepth(src Geometry, bs, want int, why *[]string) int {
	qd, from := want, "given"
	if want <= 0 {
		qd, from = DefaultQueueDepth, "default"
	}
	line := fmt.Sprintf("queue depth %d: %s", qd, from)
	if qd > MaxQueueDepth {
		qd = MaxQueueDepth
		line = fmt.Sprintf("queue depth %d: %s %d capped at the maximum", qd, from, want)
	}
	if src.Size > 0 {
		// Not (size+bs-1)/bs: that wraps negative for a size near 2^63.
		if blocks := src.Size/int64(bs) + min(src.Size%int64(bs), 1); int64(qd) > blocks {
			qd = int(blocks)
			line = fmt.Sprintf("queue depth %d: the source has only %s of %s",
				qd, plural(blocks, "block"), sizeString(int64(bs)))
		}
	}
	if int64(qd)*int64(bs) > MaxInFlightBytes {
		qd = max(1, MaxInFlightBytes/bs)
		line = fmt.Sprintf("queue depth %d: clamped so %d x %s in flight stays within %s",
			qd, qd, sizeString(int64(bs)), sizeString(MaxInFlightBytes))
		if int64(bs) > MaxInFlightBytes {
			line = fmt.Sprintf("queue depth 1: one block of %s is already over %s",
				sizeString(int64(bs)), sizeString(MaxInFlightBytes))
		}
	}
	*why = append(*why, line)
	return qd
}

// plural renders "1 block" or "3 blocks".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
