package main

import (
	"fmt"
	"io"

	"github.com/ringcp/ringcp/blkhash"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
)

// imageioChecksum makes the oVirt imageio checksum of a range of length
// bytes (--checksum, ringcp checksum): blkhash, hashing on every CPU.
func imageioChecksum(length int64) copier.BlockSum {
	return imageioSum{blkhash.NewHasher(length, 0)}
}

// imageioSum is blkhash's Hasher as copier takes a block checksum.
type imageioSum struct{ *blkhash.Hasher }

func (s imageioSum) Sum() (copier.ChecksumResult, error) {
	r, err := s.Result()
	return copier.ChecksumResult(r), err
}

// jsonVerify is the "verify" object of --json with --verify.
type jsonVerify struct {
	Result    string  `json:"result"` // "ok" or "mismatch"
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	BlockSize int     `json:"block_size"` // the blocks bad_blocks counts
	BadBlocks int64   `json:"bad_blocks"`
	// FirstBadOffset is DST's offset of the first byte that differs, -1
	// when none does.
	FirstBadOffset int64  `json:"first_bad_offset"`
	Read           string `json:"read"` // how DST was read back
	// SrcZerosRead: bytes of an NBD SRC that its block status called
	// zeros, read from SRC after the copy to check them.
	SrcZerosRead int64 `json:"src_zeros_read"`
}

// addTrust fills in what --verify, --checksum and --resume add.
func addTrust(j *jsonReport, r copier.Report) {
	if v := r.Verify; v != nil {
		j.Verify = &jsonVerify{Result: "ok", Bytes: v.Bytes, Seconds: v.Seconds, BlockSize: copier.CellSize,
			BadBlocks: v.BadBlocks, FirstBadOffset: v.FirstBad, Read: v.How, SrcZerosRead: v.SrcZerosRead}
		if v.BadBlocks > 0 {
			j.Verify.Result = "mismatch"
		}
	}
	j.Checksum = r.Checksum
	j.Resumed, j.StateFile, j.ResumeFrom = r.Resumed, r.StatePath, r.ResumeFrom
}

// printTrust adds the lines of --verify, --checksum and --resume to the
// summary of a complete copy.
func printTrust(w io.Writer, r copier.Report) {
	if r.Resumed > 0 {
		fmt.Fprintf(w, "ringcp: resumed: the first %s were copied by an earlier run\n", byteCount(r.Resumed))
	}
	if v := r.Verify; v != nil {
		fmt.Fprintf(w, "ringcp: verified: DST reads back as SRC was read, %s in %.2f s (%s; %s)\n",
			units.Format(v.Bytes), v.Seconds, units.Rate(v.Bytes, v.Seconds), v.How)
		if v.SrcZerosRead > 0 {
			fmt.Fprintf(w, "ringcp: verified: the %s that SRC's NBD block status called zeros read from SRC as zeros\n", units.Format(v.SrcZerosRead))
		}
	}
	if c := r.Checksum; c != nil {
		fmt.Fprintf(w, "ringcp: checksum of SRC (%s, block size %d): %s\n", c.Algorithm, c.BlockSize, c.Checksum)
	}
}

// resumableLine says what a stopped resumable copy left, and how to go on.
func resumableLine(r copier.Report) string {
	holder := "it"
	if r.PartialPath != "" {
		holder = r.PartialPath
	}
	if r.ResumeFrom == 0 {
		// Less than one 4 MiB block was recorded: a rerun starts over,
		// and says so.
		return fmt.Sprintf("is kept for --resume, with %s: not a whole 4 MiB block of the copy was recorded as synced yet; run the same command again to copy it",
			r.StatePath)
	}
	return fmt.Sprintf("is kept for --resume: %s holds the first %s of the copy, synced, as %s records; run the same command again to copy the rest",
		holder, byteCount(r.ResumeFrom), r.StatePath)
}
