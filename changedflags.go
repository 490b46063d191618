package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/ringcp/ringcp/extents"
)

// The flags that copy only what changed: --extents and --dirty-bitmap
// restrict a copy; --granule, --ssh and --remote-ringcp are ringcp
// sync's.

// changedFlags are those flags as parsed.
type changedFlags struct {
	extents      string
	dirtyBitmap  string
	granule      sizeFlag
	ssh          string
	remoteRingcp string
	fs           *pflag.FlagSet
}

// syncConfig is what only ringcp sync takes.
type syncConfig struct {
	granule      int
	ssh          string // the ssh command line, "" for ssh
	remoteRingcp string // ringcp on the other host, "" for ringcp in its PATH
	given        []string
}

func addChangedFlags(fs *pflag.FlagSet) *changedFlags {
	c := &changedFlags{fs: fs}
	fs.StringVar(&c.extents, "extents", "", "copy only the ranges listed in FILE (- reads stdin): one \"OFFSET LENGTH\" a line in bytes, or a JSON array of {\"offset\",\"length\"}; SRC offset = DST offset, DST must exist and keeps every other byte")
	fs.StringVar(&c.dirtyBitmap, "dirty-bitmap", "", "with an NBD SRC: copy only what its dirty bitmap NAME marks dirty (qemu-nbd -B NAME, qemu-storage-daemon's bitmaps); a server without it is refused")
	fs.Var(&c.granule, "granule", "ringcp sync: the unit compared and written, a power of two from 4K to 64K (default 64K)")
	fs.StringVar(&c.ssh, "ssh", "", "ringcp sync with an ssh:// end: the ssh command and its options (default \"ssh\"; e.g. \"ssh -F CONFIG -i KEY\")")
	fs.StringVar(&c.remoteRingcp, "remote-ringcp", "", "ringcp sync with an ssh:// end: the ringcp binary on the other host (default: ringcp in its PATH)")
	return c
}

// apply puts the flags into cfg: the extent list read (a list that does
// not parse is bad input, exit 2, naming its line), the sync's settings
// kept for ringcp sync to check.
func (c *changedFlags) apply(cfg *config) error {
	if c.fs.Changed("extents") {
		entries, err := readExtents(c.extents)
		if err != nil {
			return err
		}
		cfg.opts.Extents, cfg.opts.ExtentsSet = entries, true
	}
	if c.fs.Changed("dirty-bitmap") && c.dirtyBitmap == "" {
		return errors.New("--dirty-bitmap needs the bitmap's name")
	}
	cfg.opts.DirtyBitmap = c.dirtyBitmap
	if c.granule.set {
		if g := c.granule.v; g < 4096 || g > 64<<10 || g&(g-1) != 0 {
			return fmt.Errorf("--granule %d: want a power of two from 4K to 64K", g)
		}
		cfg.sync.granule = int(c.granule.v)
	}
	cfg.sync.ssh, cfg.sync.remoteRingcp = c.ssh, c.remoteRingcp
	for _, name := range []string{"granule", "ssh", "remote-ringcp"} {
		if c.fs.Changed(name) {
			cfg.sync.given = append(cfg.sync.given, "--"+name)
		}
	}
	return nil
}

// readExtents parses the list in path ("-": stdin).
func readExtents(path string) ([]extents.Entry, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--extents: %w", err)
		}
		defer f.Close()
		r = f
	}
	entries, err := extents.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("--extents %s: %w", path, err)
	}
	return entries, nil
}

// onlyForSync refuses ringcp sync's own flags on a copy.
func (s syncConfig) onlyForSync() error {
	if len(s.given) > 0 {
		return usagef("%s is for ringcp sync", s.given[0])
	}
	return nil
}
