package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestResumeCoarseTimestamps: DST on a filesystem whose timestamps are
// whole seconds (ext4 with 128-byte inodes, as ext2/ext3 and old ext4
// made them; vfat's are 2 s). A write into the part copied just after a
// SIGINT, in the second of the state's last record, keeps DST's size,
// mtime and ctime as recorded: the rerun trusted them, read nothing and
// exited 0 with that byte in DST. It must compare the part copied and
// refuse. Both engines.
func TestResumeCoarseTimestamps(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	dev, _ := blocktest.Device(t, 256<<20)
	blocktest.Mkfs(t, dev, "ext4", "-I", "128")
	dir := blocktest.Mount(t, dev, "ext4", 0)
	for _, eng := range resumeEngines {
		t.Run(eng, func(t *testing.T) {
			src, dst := filepath.Join(dir, eng+"-src.img"), filepath.Join(dir, eng+"-dst.img")
			randomFile(t, src, resumeSize, 63)
			partial, state := dst+".ringcp-partial", copier.StatePath(dst)
			// The write must land in the second of the record; a try
			// that crossed into the next one is made again.
			for try := 0; ; try++ {
				os.Remove(partial)
				os.Remove(state)
				// Capped: on a fast disk the whole copy took less than
				// one --sync-every, and ended before its state recorded
				// anything.
				stoppedAfter(t, state, 8<<20, "--engine", eng, "--max-rate", "24M", src, dst)
				before, err := os.Stat(partial)
				if err != nil {
					t.Fatal(err)
				}
				flipByte(t, partial, 4096)
				after, _ := os.Stat(partial)
				if after.ModTime().Equal(before.ModTime()) {
					break
				}
				if try == 5 {
					t.Fatalf("six writes after the stop all changed DST's whole-second mtime")
				}
			}
			r := cli(t, "-v", "--resume", "--engine", eng, src, dst)
			r.want(t, 2, "differs from SRC at offset 4096")
		})
	}
}
