package guard

import (
	"io"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Limits of the read NonZero does: ringcp asks only for a copy whose data
// does not fit DST's filesystem unless zero detection saves it.
const (
	scanAll     = 64 << 20  // data up to this is read whole
	sampleCount = 256       // beyond, this many samples,
	sampleSize  = 256 << 10 // of this many bytes each, spread evenly: 64 MiB read at most
	scanBuf     = 1 << 20
)

// Extent is a run of a file's data: offset and length.
type Extent struct{ Off, N int64 }

// Extents are a file's data runs, in order.
type Extents []Extent

// Bytes is how much data the extents hold.
func (e Extents) Bytes() int64 {
	var n int64
	for _, x := range e {
		n += x.N
	}
	return n
}

// Estimate is how many bytes of a file's data are not zeros: Need,
// exactly or within Margin either way.
type Estimate struct {
	Need, Margin int64
	Sampled      bool // judged by samples, not by reading it all
}

// NonZero estimates how much of f's data extents ext (data bytes in all)
// zero detection will write: the bytes outside blocks of zb bytes that
// are all zeros. Data up to scanAll is read whole; the estimate is then
// off by a few blocks only where a copy's block grid differs, hence a
// small margin. Larger data is sampled, and its estimate gets a margin of
// 1/32. It reads at most 64 MiB.
func NonZero(f io.ReaderAt, ext Extents, data int64, zb int) (Estimate, error) {
	buf := make([]byte, scanBuf)
	if data <= scanAll {
		var nz int64
		for _, x := range ext {
			n, err := nonZeroIn(f, buf, x.Off, x.N, zb)
			if err != nil {
				return Estimate{}, err
			}
			nz += n
		}
		return Estimate{Need: nz, Margin: data/256 + int64(zb)}, nil
	}
	var seen, nz int64
	c := cursor{ext: ext}
	for i := range int64(sampleCount) {
		off, n := c.at(i*(data/sampleCount), sampleSize)
		got, err := nonZeroIn(f, buf, off, n, zb)
		if err != nil {
			return Estimate{}, err
		}
		seen, nz = seen+n, nz+got
	}
	need := int64(float64(data) * (float64(nz) / float64(seen)))
	return Estimate{Need: need, Margin: data / 32, Sampled: true}, nil
}

// nonZeroIn reads n bytes of f at off and counts those not in all-zero
// blocks of zb bytes (counted from off).
func nonZeroIn(f io.ReaderAt, buf []byte, off, n int64, zb int) (int64, error) {
	var nz int64
	for done := int64(0); done < n; {
		want := min(int64(len(buf)), n-done)
		got, err := f.ReadAt(buf[:want], off+done)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if got == 0 {
			break // the file shrank: the copy will say so
		}
		for b := 0; b < got; b += zb {
			block := buf[b:min(b+zb, got)]
			if !zeros.Is(block) {
				nz += int64(len(block))
			}
		}
		done += int64(got)
	}
	return nz, nil
}

// cursor walks extents in data order: at(pos, limit) is where the byte
// pos of the data lies in the file, and how much of its extent follows,
// at most limit. Positions must not decrease.
type cursor struct {
	ext  Extents
	i    int
	base int64 // data bytes before ext[i]
}

func (c *cursor) at(pos, limit int64) (off, n int64) {
	for c.i < len(c.ext)-1 && pos >= c.base+c.ext[c.i].N {
		c.base += c.ext[c.i].N
		c.i++
	}
	x := c.ext[c.i]
	in := pos - c.base
	return x.Off + in, min(limit, x.N-in)
}
