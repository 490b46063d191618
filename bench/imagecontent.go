package main

import (
	"encoding/binary"
	"fmt"
	"math"
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
// them: text, machine code, bytes that are already compressed (packages,
// media) and zero blocks. It is made up, and compressors rank on it as
// they do on no real disk in particular. Clusters that mix machine code
// with incompressible bytes are where deflaters differ most: klauspost's
// level 6, which codes 64 KiB as one block, made them up to 13% larger
// than zlib's level 6 (qemu-img -c) and the image 4.3% larger; its level
// 7, which ends blocks as zlib does, makes the image 1.7% smaller (256 MiB,
// seed 1).

const (
	imageRegion = 1 << 20  // free or used
	imageRun    = 16 << 10 // one kind of bytes
	imageFree   = 4        // 1 region in imageFree is free space
)

// Shares of a used run's kinds, out of 100.
const (
	runText   = 35
	runCode   = 25
	runPacked = 25 // what is left, 15, are zero blocks
)

// runKind is what a used run holds.
type runKind int

const (
	kindText runKind = iota
	kindCode
	kindPacked
	kindZeros
)

// imageSyllables make the text runs' words: a vocabulary of
// imageVocab words, drawn by Zipf's law as a language's are, so that the
// text compresses as prose, logs and man pages do.
var imageSyllables = strings.Fields(`a an ar at be ca co de di e el en er es fi ga
ha i in is ka la le li lo ma me mi mo na ne ni no o on or pa pe po ra re ri ro sa
se si so ta te ti to tu u un ur va ve vi wa we xe ya yo za ze`)

const imageVocab = 4096

var imageWords = func() []string {
	g := rand.New(rand.NewPCG(1, 2))
	words := make([]string, imageVocab)
	for i := range words {
		var b strings.Builder
		for range 1 + g.IntN(4) {
			b.WriteString(imageSyllables[g.IntN(len(imageSyllables))])
		}
		words[i] = b.String()
	}
	return words
}()

// imageZipf maps a 16-bit draw to a word of imageWords by Zipf's law
// (P(k) proportional to (k+2)^-1.1, rand.NewZipf's with s 1.1, v 2): a
// table, as a Zipf draw's exp and log would make the disk slower to make
// and check than the copies are (40 MB/s).
var imageZipf = func() *[1 << 16]uint16 {
	cum := make([]float64, imageVocab)
	total := 0.0
	for k := range cum {
		total += math.Pow(float64(k+2), -1.1)
		cum[k] = total
	}
	var t [1 << 16]uint16
	k := 0
	for i := range t {
		u := (float64(i) + 0.5) / float64(len(t)) * total
		for cum[k] < u {
			k++
		}
		t[i] = uint16(k)
	}
	return &t
}()

// imageOps are the bytes machine code is made of most, for the binary
// runs: opcodes and prefixes of x86-64, and the zeros and all-ones of
// small immediates and displacements.
var imageOps = []byte{0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x48, 0x48, 0x48, 0x89, 0x89, 0x8b, 0x8b,
	0xe8, 0x0f, 0x85, 0x84, 0x74, 0x75, 0xeb, 0xc3, 0x83, 0xc7, 0x45, 0x44, 0x24, 0x4c, 0x8d,
	0x31, 0xc0, 0x01, 0x08, 0x10, 0x20, 0x41, 0x5d, 0x55, 0x53, 0x5b, 0x90, 0xcc}

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
	case d < runText+runCode:
		return kindCode
	case d < runText+runCode+runPacked:
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
	case kindCode:
		fillCode(&g, p)
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
		// Byte by byte: words are a few bytes, shorter than a copy's
		// call costs.
		w := imageWords[imageZipf[uint16(r)]]
		for j := 0; j < len(w) && n < len(p); j++ {
			p[n] = w[j]
			n++
		}
		if n < len(p) {
			p[n] = separator(r >> 60)
			n++
		}
	}
}

// separator is what follows a word, from a draw of 0 to 15: mostly a
// space, now and then a line's end or punctuation.
func separator(d uint64) byte {
	switch d {
	case 0:
		return '\n'
	case 1:
		return ','
	case 2:
		return '.'
	}
	return ' '
}

// fillCode writes bytes as machine code has them: mostly common
// opcodes, some arbitrary (addresses, immediates), and a quarter of the
// time a piece of what came shortly before again (a repeated sequence).
func fillCode(g *rand.PCG, p []byte) {
	n := 0
	for n < len(p) {
		r := g.Uint64()
		if r%4 == 0 && n > 64 {
			dist := 1 + int(r>>8)%min(n, 2048)
			l := min(4+int(r>>20)%20, len(p)-n)
			for k := range l {
				p[n+k] = p[n-dist+k]
			}
			n += l
			continue
		}
		for k := 0; k < 6 && n < len(p); k, r = k+1, r>>8 {
			if b := byte(r >> 16); b < 200 {
				p[n] = imageOps[int(b)%len(imageOps)]
			} else {
				p[n] = byte(r >> 24)
			}
			n++
		}
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
		"the others in 16 KiB runs of text (%d%%), machine code (%d%%), incompressible bytes (%d%%) and "+
		"zero blocks (%d%%); it allocates %s (st_blocks).", sizeLabel(c.size), imageFree,
		runText, runCode, runPacked, 100-runText-runCode-runPacked, units.Format(alloc))
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
