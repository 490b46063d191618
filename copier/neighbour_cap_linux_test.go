package copier_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// TestNeighbourAloneCapped: a rate-capped copy with --verify, file to
// file on an ext4 that nothing else uses (on a loop device over a tmpfs
// of the test's own), must not say that others held it back. It said
// "held back 1-2 s by others' I/O, down to 0% of its speed alone": the
// cap's requests (1/40 s of 8 MiB/s, 209408 bytes) were a multiple of
// the 512-byte sector but not of ext4's 4 KiB block, so the file system
// zeroed the blocks around every O_DIRECT write (five times the copy's
// writes on the disk, counted as others'), and judgements in which no
// 4 MiB verification cell finished counted as held back.
func TestNeighbourAloneCapped(t *testing.T) {
	blocktest.NeedRoot(t)
	const size, capBPS = 32 << 20, 8 << 20
	dir := privateTmpfs(t, 256<<20)
	img := filepath.Join(dir, "fs.img")
	blocktest.Run(t, "truncate", "-s", "200M", img)
	blocktest.Mkfs(t, img, "ext4", "-b", "4096") // as most: a block of 4 KiB
	dev := blocktest.Loop(t, img, "--direct-io=on")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	src, dst := filepath.Join(mnt, "src"), filepath.Join(mnt, "dst")
	writeRandomFile(t, src, size)
	unix.Sync() // SRC's pages written back now, not beside the copy as others' writes
	p, err := copier.Prepare(copier.Options{Src: src, Dst: dst, MaxRate: capBPS, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Neighbour
	if n == nil {
		t.Fatal("no queue depth given, and no good neighbour in the report")
	}
	t.Logf("block %d, %.1f s: %s", p.BlockSize, rep.Seconds, n)
	if n.OthersSeconds > 0 || n.HeldSeconds > 0 || n.Held() != "" {
		t.Errorf("alone under a cap: others seen %.2f s, held back %.2f s (%q): want none", n.OthersSeconds, n.HeldSeconds, n.Held())
	}
}
