package copier

import (
	"context"
	"sync"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/zeros"
)

// An NBD SRC is mapped with block status: the copy does not read what its
// server says reads as zeros, and the digests record zeros there. A
// read-back of DST against those digests would then only prove that DST
// matches SRC's map: a server whose map is wrong (it calls data zeros)
// passed --verify with DST holding zeros where SRC holds data (issue 20).
// So --verify also reads from SRC every range its map called zeros, after
// DST's read-back, and a range that holds anything else marks its cells
// bad: DST differs from SRC there.
//
// The cost is one more read of SRC's zero ranges. Over NBD a server with
// structured replies answers a read of a hole with a hole chunk, so no
// data crosses the wire for real holes, only for what the map hid. A
// local file's holes come from the kernel (SEEK_HOLE after an fdatasync
// of SRC) and are not read again; zero blocks found in data that was read
// are zeros by that read.

// zeroRanges records the chunks of the range that SRC's map called zeros
// (engine.Observer's Hole), merged where they touch.
type zeroRanges struct {
	mu  sync.Mutex
	ext [][2]int64 // range offset and length
}

func (z *zeroRanges) Data(int64, []byte) {}
func (z *zeroRanges) Durable(int64)      {}

func (z *zeroRanges) Hole(rel, n int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if k := len(z.ext); k > 0 && z.ext[k-1][0]+z.ext[k-1][1] == rel {
		z.ext[k-1][1] += n
		return
	}
	z.ext = append(z.ext, [2]int64{rel, n})
}

// bytes is how much the map called zeros.
func (z *zeroRanges) bytes() int64 {
	z.mu.Lock()
	defer z.mu.Unlock()
	var n int64
	for _, e := range z.ext {
		n += e[1]
	}
	return n
}

// pieces cuts the ranges at cell boundaries, so that each piece marks one
// cell.
func (z *zeroRanges) pieces() [][2]int64 {
	z.mu.Lock()
	defer z.mu.Unlock()
	var out [][2]int64
	for _, e := range z.ext {
		for off, end := e[0], e[0]+e[1]; off < end; {
			n := min(end, (off/CellSize+1)*CellSize) - off
			out = append(out, [2]int64{off, n})
			off += n
		}
	}
	return out
}

// checkSrcZeros reads the ranges SRC's map called zeros from SRC, a few
// at once through its client, marks the cells where they are not, and
// says how many it marked.
func (p *Plan) checkSrcZeros(ctx context.Context, a *acquired, z *zeroRanges, bad *badCells) (int64, error) {
	work := make(chan [2]int64)
	var mu sync.Mutex
	var first error
	var marked int64
	var wg sync.WaitGroup
	for range min(max(p.QueueDepth, 1), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, CellSize)
			for piece := range work {
				data, err := p.srcZeroPiece(a, buf, piece)
				mu.Lock()
				switch {
				case err != nil && first == nil:
					first = err
				case data && bad.seen.get(piece[0]/CellSize) == 0:
					bad.mark(piece[0] / CellSize)
					marked++
				}
				mu.Unlock()
			}
		}()
	}
	var err error
	for _, piece := range z.pieces() {
		mu.Lock()
		err = first
		mu.Unlock()
		if err == nil && ctx.Err() != nil {
			err = &engine.CanceledError{Pass: true, Err: ctx.Err()}
		}
		if err != nil {
			break
		}
		work <- piece
	}
	close(work)
	wg.Wait()
	if err == nil {
		err = first
	}
	return marked, err
}

// srcZeroPiece reads one piece of SRC's claimed zeros and says whether
// it holds data.
func (p *Plan) srcZeroPiece(a *acquired, buf []byte, piece [2]int64) (bool, error) {
	rel, n := piece[0], piece[1]
	if err := a.src.readFull(buf, p.opts.SrcOffset+rel, n); err != nil {
		return false, err
	}
	return !zeros.Is(buf[:n]), nil
}
