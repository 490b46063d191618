package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/ringcp/ringcp/internal/units"
)

// The sparse workload copies what a VM image looks like: mostly holes, a
// sixteenth of random data in scattered extents of every size, and a few
// runs of zeros that were written (allocated, as a guest's mkfs or a
// zeroed swap area leaves them). A sparse-aware copy reads only the data,
// writes only the data, and ends with a DST no larger than SRC.

// span is a byte range [Off, Off+Len) of the sparse source.
type span struct{ Off, Len int64 }

func (s span) End() int64 { return s.Off + s.Len }

// sparseLayout is where the sparse source holds data and written zeros;
// the rest is holes. It is a function of size and seed alone, so a run
// can be repeated exactly with -seed.
type sparseLayout struct {
	Size      int64
	Data      []span // sorted, disjoint: random data
	Zeros     []span // sorted, disjoint from Data: written zeros
	EndsData  bool   // the last byte is data; else a hole ends the image
	Unaligned int    // data extents with an edge off the 4 KiB grid
}

// Shape of the layout: counts, and fractions of the image size.
const (
	sparseDataFrac = 16   // 1/16 of the image is data
	sparseMaxExt   = 256  // the largest data extent is 1/256 (64 MiB of 16 GiB)
	sparseZeroRuns = 4    // written zero runs
	sparseZeroMin  = 4096 // each is 1/4096 to 1/1024 (4-16 MiB of 16 GiB)
	sparseZeroMax  = 1024
	sparseTailHole = 128 // a hole at the end is at least 1/128
	// sparseGrid is the filesystem block (ext4 and XFS) and the page: the
	// grid on which holes exist and tools detect zeros.
	sparseGrid = 4096
)

// piece is a data extent or a written zero run before it is placed.
type piece struct {
	n         int64
	zero, odd bool // odd: may start and end off the 4 KiB grid
}

// newSparseLayout draws the layout: the pieces, then where they go. The
// generator has a stream of its own, so the layout does not repeat the
// data's words.
func newSparseLayout(size int64, seed uint64) (sparseLayout, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5ba45e))
	l := sparseLayout{Size: size, EndsData: rng.IntN(2) == 0}
	ps := drawPieces(rng, size)
	if l.EndsData && ps[len(ps)-1].zero {
		i := slices.IndexFunc(ps, func(p piece) bool { return !p.zero })
		ps[i], ps[len(ps)-1] = ps[len(ps)-1], ps[i]
	}
	err := l.place(rng, ps)
	return l, err
}

// drawPieces draws data extents from 1 KiB to size/256, log-uniform (many
// small ones, a few large ones, as a used filesystem has) until they make
// up size/16; a third of them start and end at arbitrary bytes, so that
// tools meet data and holes inside one 4 KiB block. Then the zero runs,
// whole blocks. All in a random order.
func drawPieces(rng *rand.Rand, size int64) []piece {
	var ps []piece
	lo, hi := int64(1<<10), max(size/sparseMaxExt, 64<<10)
	for want, got := size/sparseDataFrac, int64(0); got < want; {
		p := piece{n: min(logUniform(rng, lo, hi), want-got), odd: rng.IntN(3) == 0}
		if !p.odd {
			p.n = max(p.n/sparseGrid*sparseGrid, sparseGrid)
		}
		ps = append(ps, p)
		got += p.n
	}
	for range sparseZeroRuns {
		n := logUniform(rng, max(size/sparseZeroMin, sparseGrid), max(size/sparseZeroMax, 2*sparseGrid))
		ps = append(ps, piece{n: max(n/sparseGrid*sparseGrid, sparseGrid), zero: true})
	}
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	return ps
}

// place spreads the pieces over the image in their order, with random
// gaps (the holes) that share what the pieces leave free; the last piece
// ends the image or a hole of at least size/128 does.
func (l *sparseLayout) place(rng *rand.Rand, ps []piece) error {
	// Each aligned piece may move up to 4 KiB to its grid; reserve that.
	used := int64(0)
	for _, p := range ps {
		used += p.n + sparseGrid
	}
	if !l.EndsData {
		used += max(l.Size/sparseTailHole, sparseGrid)
	}
	slack := l.Size - used
	if slack < 0 {
		return fmt.Errorf("a %s sparse image is too small for its layout", sizeLabel(l.Size))
	}
	weights := make([]float64, len(ps)+1) // the last is the end's share
	total := 0.0
	for i := range weights {
		weights[i] = rng.ExpFloat64()
		total += weights[i]
	}
	pos := int64(0)
	for i, p := range ps {
		off := pos + int64(float64(slack)*weights[i]/total)
		if !p.odd {
			off = (off + sparseGrid - 1) / sparseGrid * sparseGrid
		}
		if l.EndsData && i == len(ps)-1 {
			off = l.Size - p.n
		}
		s := span{off, p.n}
		if p.zero {
			l.Zeros = append(l.Zeros, s)
		} else {
			l.Data = append(l.Data, s)
			if s.Off%sparseGrid != 0 || s.End()%sparseGrid != 0 {
				l.Unaligned++
			}
		}
		pos = s.End()
	}
	return nil
}

// logUniform draws from [lo, hi) with a uniform logarithm.
func logUniform(rng *rand.Rand, lo, hi int64) int64 {
	return int64(float64(lo) * math.Pow(float64(hi)/float64(lo), rng.Float64()))
}

func sumLen(ss []span) int64 {
	var n int64
	for _, s := range ss {
		n += s.Len
	}
	return n
}

func (l sparseLayout) String() string {
	end := "a hole at the end"
	if l.EndsData {
		end = "data up to the last byte"
	}
	return fmt.Sprintf("%s image: %s of random data in %d extents (%d with an edge off the 4 KiB grid), "+
		"%d written zero runs (%s), %s", sizeLabel(l.Size), units.Format(sumLen(l.Data)), len(l.Data), l.Unaligned,
		len(l.Zeros), units.Format(sumLen(l.Zeros)), end)
}

// sparseContent is the sparse source's bytes: randomContent inside the
// data extents, zeros everywhere else (holes and written zeros alike, as
// a reader sees them).
type sparseContent struct {
	data []span
	rnd  randomContent
}

func (c sparseContent) Fill(off int64, p []byte) {
	clear(p)
	end := off + int64(len(p))
	i := sort.Search(len(c.data), func(i int) bool { return c.data[i].End() > off })
	for ; i < len(c.data) && c.data[i].Off < end; i++ {
		from, to := max(off, c.data[i].Off), min(end, c.data[i].End())
		c.rnd.Fill(from, p[from-off:to-off])
	}
}

// writeSparse makes path the layout's image: a file of l.Size with the
// data and zero runs written (buffered: their edges are not sector
// aligned) and everything else left as holes, then fsync'ed.
func writeSparse(path string, l sparseLayout, c Content) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(l.Size); err != nil {
		return err
	}
	buf := make([]byte, chunkSize)
	spans := slices.Concat(l.Data, l.Zeros)
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.Off, b.Off) })
	for _, s := range spans {
		for off := s.Off; off < s.End(); off += chunkSize {
			p := buf[:min(chunkSize, s.End()-off)]
			c.Fill(off, p)
			if _, err := f.WriteAt(p, off); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	return f.Sync()
}

// allocBytes is what path takes on disk: st_blocks in 512-byte units,
// as du counts it.
func allocBytes(path string) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Blocks * 512, nil
}

// makeSparseSource writes the run's sparse image (-sparse-size, laid out
// from -seed) and measures its allocation, which every DST is held to.
func makeSparseSource(e *Env, cfg *Config) (*Source, error) {
	l, err := newSparseLayout(cfg.SparseSize, cfg.Seed)
	if err != nil {
		return nil, err
	}
	c := sparseContent{data: l.Data, rnd: randomContent{seed: cfg.Seed}}
	path := filepath.Join(e.Dir, "src-sparse.img")
	e.logf("writing a sparse %s (seed %d) to %s", l, cfg.Seed, path)
	if err := writeSparse(path, l, c); err != nil {
		return nil, err
	}
	alloc, err := allocBytes(path)
	if err != nil {
		return nil, err
	}
	about := fmt.Sprintf("SRC is a %s; it allocates %s (st_blocks). MB/s counts the image's "+
		"apparent size, holes included. \"DST alloc\" is each copy's st_blocks×512 (the most over "+
		"its rounds), which the target holds to at most SRC's; ringcp-nosparse (--sparse never) is the "+
		"reference that writes every byte.", l, units.Format(alloc))
	return &Source{Path: path, Size: l.Size, Content: c, About: about, Alloc: alloc}, nil
}

// sparseSpace is the most disk the sparse workload takes at once: SRC's
// data and zero runs, and a DST that a non-sparse copy fills entirely.
func sparseSpace(cfg *Config) int64 {
	return cfg.SparseSize + cfg.SparseSize/8
}
