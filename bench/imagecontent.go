package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/internal/units"
)

// The compressed qcow2 workloads need a disk that compresses as a used
// filesystem's does: random data would be stored as it is (a compressor
// keeps a cluster that does not shrink uncompressed), and zeros would not
// be stored at all, so neither would cost a decompression. imageContent
// is such a disk, made up so that any range can be made again for the
// check: 1 MiB regions, a quarter of them free space (zeros, holes in the
// raw file), the rest used, in 16 KiB runs of four kinds as files hold
// them: text, binary records (tables, code), bytes that are already
// compressed (packages, media) and zero blocks.

const (
	imageRegion = 1 << 20  // free or used
	imageRun    = 16 << 10 // one kind of bytes
	imageFree   = 4        // 1 region in imageFree is free space
)

// Shares of a used run's kinds, out of 100.
const (
	runText    = 35
	runRecords = 25
	runPacked  = 25 // what is left, 15, are zero blocks
)

// runKind is what a used run holds.
type runKind int

const (
	kindText runKind = iota
	kindRecords
	kindPacked
	kindZeros
)

// imageWords is the text runs' vocabulary: words of configuration files,
// logs and man pages.
var imageWords = strings.Fields(`the of and to in is for on that with as by this from at be
are or an it not all can if will file user system error config data set default value
path name list return type string int struct function module package include usr lib
share bin etc var log info warning debug server client request response time date
version release kernel device disk block size read write open close start stop
service network address port host option section local remote update install
remove build test source target linux debian ubuntu python perl shell script
command output input buffer memory process thread lock queue event message status
code number line text table index key group mode true false none null true yes no
enable disable load save copy move format image volume storage cache mount root`)

// imageContent is the bytes of a size-byte disk; zeros past size (QEMU
// reads an image's last sector whole).
type imageContent struct {
	seed uint64
	size int64
}

// free says region r (of imageRegion bytes) is free space.
func (c imageContent) free(r int64) bool {
	return mix64(c.seed^uint64(r)*0x9e3779b97f4a7c15)%imageFree == 0
}

// kind is what run i holds when its region is used.
func (c imageContent) kind(i int64) runKind {
	switch d := mix64(c.seed^0xd1b54a32d192ed03^uint64(i)*0xbf58476d1ce4e5b9) % 100; {
	case d < runText:
		return kindText
	case d < runText+runRecords:
		return kindRecords
	case d < runText+runRecords+runPacked:
		return kindPacked
	}
	return kindZeros
}

func (c imageContent) Fill(off int64, p []byte) {
	clear(p)
	var scratch [imageRun]byte
	for len(p) > 0 {
		i := off / imageRun
		at := off - i*imageRun
		n := min(int64(len(p)), imageRun-at)
		if off < c.size && !c.free(off/imageRegion) {
			if at == 0 && n == imageRun {
				c.run(i, p[:n])
			} else {
				c.run(i, scratch[:])
				copy(p[:n], scratch[at:at+n])
			}
		}
		// A run the size cuts through is zeros past it.
		if end := off + n; end > c.size {
			clear(p[max(c.size-off, 0):n])
		}
		p, off = p[n:], off+n
	}
}

// run makes run i's imageRun bytes in p.
func (c imageContent) run(i int64, p []byte) {
	var g rand.PCG
	g.Seed(c.seed, uint64(i))
	switch c.kind(i) {
	case kindText:
		fillText(&g, p)
	case kindRecords:
		fillRecords(&g, uint32(i), p)
	case kindPacked:
		for j := 0; j+8 <= len(p); j += 8 {
			binary.LittleEndian.PutUint64(p[j:], g.Uint64())
		}
	default:
		clear(p)
	}
}

// fillText writes words and separators, a line every few words.
func fillText(g *rand.PCG, p []byte) {
	n := 0
	for n < len(p) {
		r := g.Uint64()
		n += copy(p[n:], imageWords[r%uint64(len(imageWords))])
		if n < len(p) {
			p[n] = ' '
			if (r>>32)%8 == 0 {
				p[n] = '\n'
			}
			n++
		}
	}
}

// fillRecords writes 16-byte records: a counter, a small number, and
// one of a few tags.
func fillRecords(g *rand.PCG, base uint32, p []byte) {
	tags := [...]string{"INODE\x00\x00\x01", "EXTENT\x00\x02", "DIRENT\x00\x03", "XATTR\x00\x00\x04"}
	for j := 0; j+16 <= len(p); j += 16 {
		r := g.Uint64()
		binary.LittleEndian.PutUint32(p[j:], base<<10+uint32(j/16))
		binary.LittleEndian.PutUint32(p[j+4:], uint32(r%256))
		copy(p[j+8:j+16], tags[(r>>8)%uint64(len(tags))])
	}
}

// makeImageSource writes the run's image disk (-size, from -seed) as a
// raw file whose free regions are holes.
func makeImageSource(e *Env, cfg *Config) (*Source, error) {
	c := imageContent{seed: cfg.Seed, size: cfg.Size}
	path := filepath.Join(e.Dir, "src-image.img")
	e.logf("writing a %s disk laid out as a used filesystem (seed %d) to %s", sizeLabel(c.size), cfg.Seed, path)
	if err := writeImage(path, c); err != nil {
		return nil, err
	}
	alloc, err := allocBytes(path)
	if err != nil {
		return nil, err
	}
	about := fmt.Sprintf("SRC is a %s disk laid out as a used filesystem: 1 MiB regions, 1 in %d free (a hole), "+
		"the others in 16 KiB runs of text (%d%%), binary records (%d%%), incompressible bytes (%d%%) and "+
		"zero blocks (%d%%); it allocates %s (st_blocks).", sizeLabel(c.size), imageFree,
		runText, runRecords, runPacked, 100-runText-runRecords-runPacked, units.Format(alloc))
	return &Source{Path: path, Size: c.size, Content: c, About: about, Alloc: alloc}, nil
}

// writeImage writes the used regions of c to path, leaves the free ones
// as holes, and fsyncs.
func writeImage(path string, c imageContent) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(c.size); err != nil {
		return err
	}
	buf := make([]byte, imageRegion)
	for off := int64(0); off < c.size; off += imageRegion {
		if c.free(off / imageRegion) {
			continue
		}
		p := buf[:min(imageRegion, c.size-off)]
		c.Fill(off, p)
		if _, err := f.WriteAt(p, off); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return f.Sync()
}

// imageSpace is the most disk an image workload takes at once: SRC, the
// image made of it, and a DST (a file, or a device's image) as large as
// SRC.
func imageSpace(cfg *Config) int64 { return 3 * cfg.Size }
