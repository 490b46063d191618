package syncproto

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// The peer's end on this very machine (ssh to localhost) that shares
// bytes with this host's end without being the same file or device, a
// partition of it or a loop device over it, is refused before anything
// is written, as a local sync refuses it (KindOverlap, which Force does
// not lift). Comparing identities alone let a sync from a partition into
// its own disk run: every write landed on SRC's bytes still to be read.
func TestPeerEndSharesBytes(t *testing.T) {
	blocktest.NeedRoot(t)
	const size = 4 << 20
	t.Run("partition into its disk/push", func(t *testing.T) {
		disk, part, content := diskWithPartition(t, size)
		_, _, cerr, _ := push(t, context.Background(), part, disk, Options{})
		wantOverlap(t, cerr)
		synctest.Same(t, disk, content)
	})
	t.Run("partition into its disk/pull", func(t *testing.T) {
		disk, part, content := diskWithPartition(t, size)
		_, _, cerr, _ := pull(t, context.Background(), part, disk, blocksync.TargetOptions{}, Options{})
		wantOverlap(t, cerr)
		synctest.Same(t, disk, content)
	})
	t.Run("partition into its disk/pull through Direct and Limit", func(t *testing.T) {
		// ringcp's pull hands Pull Limit(NewDirect(DST)): the check must
		// see through both wrappers.
		disk, part, content := diskWithPartition(t, size)
		dst, err := blocksync.OpenTarget(disk, blocksync.TargetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		direct := blocksync.NewDirect(dst)
		defer direct.Release()
		c, s := pipes()
		sv := serve(t, s, ServeOptions{Host: "testhost", Workers: 2})
		_, cerr := Pull(context.Background(), c, part, Limit(direct, 0), Options{})
		sv.wait(t)
		wantOverlap(t, cerr)
		synctest.Same(t, disk, content)
	})
	t.Run("loop device over DST, forced/push", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "disk.img")
		content := synctest.Random(43, size)
		synctest.WriteFile(t, file, content)
		loop := blocktest.Loop(t, file, "--offset", "65536")
		_, _, cerr, _ := push(t, context.Background(), loop, file, Options{Force: true})
		wantOverlap(t, cerr)
		synctest.Same(t, file, content)
	})
}

// diskWithPartition is a loop device holding random bytes, and a
// partition of it from 1 MiB to 3 MiB.
func diskWithPartition(t *testing.T, size int64) (disk, part string, content []byte) {
	t.Helper()
	disk, _ = blocktest.Device(t, size, "--partscan")
	content = synctest.Random(42, size)
	f, err := os.OpenFile(disk, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(content, 0); err != nil || f.Sync() != nil {
		t.Fatal(err)
	}
	f.Close()
	part = blocktest.Partition(t, disk, 1, 1<<20, 2<<20)
	return disk, part, content
}

func wantOverlap(t *testing.T, err error) {
	t.Helper()
	var re *blocksync.RefusedError
	if !errors.As(err, &re) || re.Kind != blocksync.KindOverlap {
		t.Fatalf("got %v, want a %s refusal", err, blocksync.KindOverlap)
	}
}
