package cli

import (
	"testing"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
)

// TestImportBlockUnderCap: the importer's blocks are importBlock unless
// --block-size or --yield decide them, or a cap whose requests are
// smaller (under 80 MiB/s, 1/40 s of it under 2 MiB): then the cap sizes
// the buffers, blocks of 1 MiB to 2 MiB, a second of it. A cap whose
// requests are larger left the copy its default 8 MiB blocks, eight of
// them for eight connections: --max-rate 400M kept 64 MiB of buffers,
// four times what the import keeps without a cap, in a pod whose memory
// limit counts them.
func TestImportBlockUnderCap(t *testing.T) {
	const M = 1 << 20
	for _, c := range []struct {
		name  string
		base  copier.Options
		block int
	}{
		{"no cap", copier.Options{}, importBlock},
		{"4 MiB/s", copier.Options{MaxRate: 4 * M}, 0},
		{"79 MiB/s", copier.Options{MaxRate: 79 * M}, 0},
		{"80 MiB/s", copier.Options{MaxRate: 80 * M}, importBlock},
		{"400 MiB/s", copier.Options{MaxRate: 400 * M}, importBlock},
		{"400 MiB/s, --block-size", copier.Options{MaxRate: 400 * M, BlockSize: 16 * M}, 16 * M},
		{"400 MiB/s, --yield", copier.Options{MaxRate: 400 * M, Yield: true}, 0},
	} {
		j := &importJob{importer: &importer{base: c.base}, t: &cdi.Transfer{}}
		if got := j.options(copier.WebOptions{}).BlockSize; got != c.block {
			t.Errorf("%s: block size %d; want %d", c.name, got, c.block)
		}
	}
}
