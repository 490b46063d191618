package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/nbd"
)

// qcow2-chain-file reads a two-deep chain: the sparse source converted
// to a base image, and an overlay over it that a guest wrote to through
// qemu-nbd, as a VM running on an overlay of a template does. The guest
// writes random data at scattered places (over the base's data and over
// its holes), then zeroes a few runs of the base's data, which the
// overlay stores as zero clusters that hide the base.

// Shape of the guest's changes.
const (
	chainWrites = 32   // write extents
	chainFrac   = 32   // they are up to 1/32 of the disk each
	chainZeros  = 4    // runs of the base's data zeroed
	chainGrid   = 4096 // a guest writes whole 4 KiB blocks
)

// chainContent is the overlay as the guest reads it: the base, with the
// writes over it, then the zeroed runs over both (the order they were
// made in).
type chainContent struct {
	base          Content
	writes, zeros []span
	rnd           randomContent
}

func (c chainContent) Fill(off int64, p []byte) {
	c.base.Fill(off, p)
	end := off + int64(len(p))
	for _, s := range c.writes {
		if from, to := max(off, s.Off), min(end, s.End()); from < to {
			c.rnd.Fill(from, p[from-off:to-off])
		}
	}
	for _, s := range c.zeros {
		if from, to := max(off, s.Off), min(end, s.End()); from < to {
			clear(p[from-off : to-off])
		}
	}
}

// baseName is the base image of the overlay at img.
func baseName(img string) string {
	return strings.TrimSuffix(img, ".qcow2") + "-base.qcow2"
}

// drawChanges draws the guest's writes anywhere in the disk of size
// bytes, and its zeroed runs inside the base's data extents.
func drawChanges(size int64, data []span, seed uint64) (writes, zeros []span) {
	rng := rand.New(rand.NewPCG(seed, 0xc4a17))
	for range chainWrites {
		n := logUniform(rng, chainGrid, max(size/chainFrac, 2*chainGrid)) / chainGrid * chainGrid
		off := rng.Int64N(max(size-n, 1)) / chainGrid * chainGrid
		writes = append(writes, span{off, n})
	}
	for i := 0; i < chainZeros && len(data) > 0; i++ {
		d := data[rng.IntN(len(data))]
		off := (d.Off + chainGrid - 1) / chainGrid * chainGrid
		if n := d.End()/chainGrid*chainGrid - off; n > 0 {
			zeros = append(zeros, span{off, n})
		}
	}
	byOff := func(a, b span) int { return int(a.Off - b.Off) }
	slices.SortFunc(writes, byOff)
	slices.SortFunc(zeros, byOff)
	return writes, zeros
}

// makeChain converts the sparse source to the base image, makes the
// overlay at img over it, and has qemu-nbd write the guest's changes.
func makeChain(e *Env, src *Source, img string) (Content, string, error) {
	if err := needPrograms("qemu-nbd"); err != nil {
		return nil, "", err
	}
	sc, ok := src.Content.(sparseContent)
	if !ok {
		return nil, "", fmt.Errorf("the chain is made over the sparse source, not %T", src.Content)
	}
	base := baseName(img)
	if err := qemuImg(e, "convert", "-f", "raw", "-O", "qcow2", src.Path, base); err != nil {
		return nil, "", err
	}
	// A relative name, as a template's overlays record theirs.
	if err := qemuImg(e, "create", "-f", "qcow2", "-b", filepath.Base(base), "-F", "qcow2", img); err != nil {
		return nil, "", err
	}
	size := (src.Size + 511) / 512 * 512
	c := chainContent{base: sc, rnd: randomContent{seed: sc.rnd.seed ^ 0x0ce1a7}}
	c.writes, c.zeros = drawChanges(size, sc.data, sc.rnd.seed)
	if err := guestWrites(e, img, c); err != nil {
		return nil, "", err
	}
	baseAbout, err := imageAbout("The base image", base)
	if err != nil {
		return nil, "", err
	}
	overAbout, err := imageAbout("the overlay", img)
	if err != nil {
		return nil, "", err
	}
	about := fmt.Sprintf("%s; %s: the guest wrote %s in %d extents and zeroed %s of the base's data in %d runs.",
		strings.TrimSuffix(baseAbout, "."), strings.TrimSuffix(overAbout, "."), units.Format(sumLen(c.writes)), len(c.writes),
		units.Format(sumLen(c.zeros)), len(c.zeros))
	return c, about, nil
}

// guestWrites serves the overlay with qemu-nbd and writes c's changes
// through it: the writes, then the zeroed runs, then a flush.
func guestWrites(e *Env, img string, c chainContent) error {
	srv, err := startServer(e, "unix", "disk", "qemu-nbd", "--persistent", "-f", "qcow2", "-x", "disk", img)
	if err != nil {
		return err
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := nbd.Dial(ctx, srv.uri, nbd.Options{Timeout: time.Minute})
	if err != nil {
		return err
	}
	defer cl.Close()
	buf := make([]byte, chunkSize)
	for _, s := range c.writes {
		for off := s.Off; off < s.End(); off += chunkSize {
			p := buf[:min(chunkSize, s.End()-off)]
			c.rnd.Fill(off, p)
			if _, err := cl.WriteAt(p, off); err != nil {
				return fmt.Errorf("write the overlay at %d: %w", off, err)
			}
		}
	}
	for _, s := range c.zeros {
		if err := cl.Zero(s.Off, s.Len, 0); err != nil {
			return fmt.Errorf("zero the overlay at %d: %w", s.Off, err)
		}
	}
	return cl.Flush()
}
