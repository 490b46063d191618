package cli

import (
	"fmt"
	"io"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
)

// imageioChecksum makes the oVirt imageio checksum of a range of length
// bytes (--checksum, ringcp checksum): the library's.
var imageioChecksum = copier.ImageioChecksum

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
