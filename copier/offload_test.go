package copier_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/blocktest"
)

// TestReflinkOnXFSAndBtrfs: on filesystems that share extents, auto
// offload clones: exact content, no new data blocks, and the report says
// reflink.
func TestReflinkOnXFSAndBtrfs(t *testing.T) {
	for _, fs := range []struct {
		name string
		args []string
	}{{"xfs", []string{"-m", "reflink=1"}}, {"btrfs", nil}} {
		t.Run(fs.name, func(t *testing.T) {
			blocktest.NeedTool(t, "losetup")
			blocktest.NeedTool(t, "mkfs."+fs.name)
			dev, _ := blocktest.Device(t, 512<<20, "--direct-io=on")
			blocktest.Mkfs(t, dev, fs.name, fs.args...)
			dir := blocktest.Mount(t, dev, fs.name, 0)
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			want := sparseImage(t, src)
			rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Offload != "reflink" || rep.Engine != "reflink" || !rep.Synced || rep.Contiguous != int64(len(want)) || rep.Bytes != int64(len(want)) {
				t.Fatalf("report %+v: want a synced reflink of all %d bytes, all contiguous", rep, len(want))
			}
			compareFile(t, dst, want)

			// A zero-length range copies nothing: FICLONERANGE would read
			// length 0 as "to the end of SRC".
			old := randomBytes(1<<20, 9)
			writeFile(t, dst, old)
			rep, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Offload: copier.OffloadReflink,
				DstOffset: 4096, Length: 0, LengthSet: true})
			if err != nil || rep.Bytes != 0 || rep.Offload != "" {
				t.Fatalf("zero-length reflink: %+v, %v: want nothing copied, no offload", rep, err)
			}
			compareFile(t, dst, old)

			forced := filepath.Join(dir, "ranged")
			o := copier.Options{Src: src, Dst: forced, Offload: copier.OffloadCopyRange, SrcOffset: 1 << 20, Length: 8 << 20, LengthSet: true}
			rep, err = copier.Copy(context.Background(), o)
			if err != nil || rep.Offload != "copy_file_range" {
				t.Fatalf("copy-range: %+v, %v", rep, err)
			}
			compareFile(t, forced, want[1<<20:9<<20])
		})
	}
}

// TestOffloadFallsBackOnExt4: ext4 cannot reflink; a forced reflink gives
// way to the engine, with the reason, and the copy is exact.
func TestOffloadFallsBackOnExt4(t *testing.T) {
	dir := t.TempDir() // ext4 on this machine
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	want := sparseImage(t, src)
	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Offload: copier.OffloadReflink})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Offload != "" || !strings.Contains(rep.OffloadFallback, "FICLONE") {
		t.Fatalf("offload %q, fallback %q: want the engine, and FICLONE's error", rep.Offload, rep.OffloadFallback)
	}
	compareFile(t, dst, want)

	// Auto does not use copy_file_range on ext4: the engine is faster.
	rep, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: filepath.Join(dir, "auto")})
	if err != nil || rep.Offload != "" || rep.OffloadFallback != "" {
		t.Fatalf("auto on ext4: %+v, %v: want the engine, untried offload", rep, err)
	}

	// Forced copy_file_range works on ext4 (an in-kernel copy).
	rep, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: filepath.Join(dir, "cfr"), Offload: copier.OffloadCopyRange})
	if err != nil || rep.Offload != "copy_file_range" {
		t.Fatalf("forced copy-range: %+v, %v", rep, err)
	}
	compareFile(t, filepath.Join(dir, "cfr"), want)
}

// TestOffloadStopped: a copy_file_range offload stopped by its context
// ends like an engine copy: a CanceledError, DST synced and cut to what
// was moved, and the report says so.
func TestOffloadStopped(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	sparseImage(t, src)
	writeFile(t, dst, randomBytes(3<<20, 10))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := copier.Copy(ctx, copier.Options{Src: src, Dst: dst, Offload: copier.OffloadCopyRange})
	var ce *engine.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a CanceledError", err)
	}
	if rep.Offload != "copy_file_range" || !rep.Synced || rep.Contiguous != 0 || rep.DstState != copier.DstPrefix {
		t.Fatalf("report %+v: want the offload named, synced, DST cut to its empty prefix", rep)
	}
	compareFile(t, dst, nil)
}

func TestOffloadRefusedForBlockDevices(t *testing.T) {
	dev, _ := blocktest.Device(t, 1<<20)
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, randomBytes(4096, 1))
	_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dev, Offload: copier.OffloadReflink})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
}
