package cdi

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
)

// usableExact is CDI's usable space computed in exact arithmetic:
// ceil(capacity / (1 + overhead)) rounded down to whole MiB, overhead
// given as CDIConfig writes it (a decimal).
func usableExact(t *testing.T, overhead string, capacity int64) int64 {
	t.Helper()
	oh, ok := new(big.Rat).SetString(overhead)
	if !ok {
		t.Fatalf("overhead %q", overhead)
	}
	q := new(big.Rat).Quo(new(big.Rat).SetInt64(capacity), oh.Add(oh, big.NewRat(1, 1)))
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if new(big.Rat).SetInt(n).Cmp(q) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64() / (1 << 20) * (1 << 20)
}

// TestVolumeSizes: a real ext4 volume (mkfs on a loop device, mounted)
// and a real block volume, measured as CDI measures them, and the image
// sizes CDI would leave on them.
func TestVolumeSizes(t *testing.T) {
	blocktest.NeedTool(t, "mkfs.ext4")
	dev, _ := blocktest.Device(t, 256<<20)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)

	p := Paths{DataDir: mnt, BlockDevice: filepath.Join(t.TempDir(), "cdi-block-volume")}
	v, err := ProbeVolume(p)
	if err != nil {
		t.Fatal(err)
	}
	// stat -f: %a blocks free to a user, %s the block size (f_bsize).
	fields := strings.Fields(blocktest.Run(t, "stat", "-f", "-c", "%a %s", mnt))
	bavail, _ := strconv.ParseInt(fields[0], 10, 64)
	bsize, _ := strconv.ParseInt(fields[1], 10, 64)
	if v.Mode != Filesystem || v.Path != filepath.Join(mnt, "disk.img") || v.Dir != mnt || v.Available != bavail*bsize {
		t.Fatalf("volume %+v, want a filesystem of %d free bytes", v, bavail*bsize)
	}
	if v.Available < 200<<20 || v.Available > 256<<20 {
		t.Fatalf("ext4 on 256 MiB has %d bytes free", v.Available)
	}

	for _, overhead := range []string{"0", "0.055", "0.06", "0.1", "1"} {
		c, err := Parse(podEnv("FILESYSTEM_OVERHEAD="+overhead, "IMPORTER_IMAGE_SIZE=1Gi"))
		if err != nil {
			t.Fatal(err)
		}
		capacity := c.Capacity(v) // free bytes < 1 GiB asked
		if capacity != v.Available {
			t.Errorf("capacity %d, want the free %d", capacity, v.Available)
		}
		usable := usableExact(t, overhead, capacity)
		if got := UsableSpace(c.FilesystemOverhead, capacity); got != usable {
			t.Errorf("overhead %s: usable %d, want %d", overhead, got, usable)
		}
		for _, virtual := range []int64{0, 1, 4097, usable - 1, usable, usable + 1, capacity} {
			want := max(virtual, usable)
			if got, err := c.TargetSize(v, virtual); err != nil || got != want {
				t.Errorf("overhead %s: a %d-byte image leaves disk.img of %d, %v; want %d", overhead, virtual, got, err, want)
			}
		}
		_, err = c.TargetSize(v, capacity+1)
		if !strings.Contains(Outcome{Err: err}.Text(), "is larger than the reported available storage") {
			t.Errorf("an image one byte too large: %v", err)
		}
		if got := c.BlankSize(v); got != usable {
			t.Errorf("blank disk of %d, want %d", got, usable)
		}
	}

	// Smaller asked than free: the size asked bounds both.
	c, err := Parse(podEnv("FILESYSTEM_OVERHEAD=0.055", "IMPORTER_IMAGE_SIZE=100Mi"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Capacity(v) != 100<<20 || c.BlankSize(v) != usableExact(t, "0.055", 100<<20) {
		t.Errorf("capacity %d blank %d under a 100Mi request", c.Capacity(v), c.BlankSize(v))
	}
	// No size asked: the image keeps its own.
	c, _ = Parse(podEnv("IMPORTER_IMAGE_SIZE="))
	if got, _ := c.TargetSize(v, 4097); got != 4097 {
		t.Errorf("without IMPORTER_IMAGE_SIZE a 4097-byte image becomes %d", got)
	}

	// A block volume: the device's size, whatever was asked, never grown.
	bdev, _ := blocktest.Device(t, 64<<20+4096)
	bv, err := ProbeVolume(Paths{DataDir: mnt, BlockDevice: bdev})
	if err != nil || bv.Mode != Block || bv.Path != bdev || bv.Available != 64<<20+4096 {
		t.Fatalf("block volume %+v, %v", bv, err)
	}
	c, _ = Parse(podEnv("IMPORTER_IMAGE_SIZE=1Mi", "FILESYSTEM_OVERHEAD=0.5"))
	if got, err := c.TargetSize(bv, 511); err != nil || got != bv.Available {
		t.Errorf("block target %d, %v", got, err)
	}
	if _, err := c.TargetSize(bv, bv.Available+1); err == nil {
		t.Error("an image larger than the device taken")
	}
	if c.BlankSize(bv) != 1<<20 {
		t.Errorf("blank block zeros %d bytes, want the 1 MiB asked", c.BlankSize(bv))
	}
}

func TestProbeVolumeRefuses(t *testing.T) {
	dir := t.TempDir()
	notDev := filepath.Join(dir, "cdi-block-volume")
	if err := os.WriteFile(notDev, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Paths{
		{DataDir: dir, BlockDevice: notDev},                                            // a file where the device goes
		{DataDir: filepath.Join(dir, "none"), BlockDevice: filepath.Join(dir, "none")}, // no volume at all
		{DataDir: notDev, BlockDevice: filepath.Join(dir, "none")},                     // a file where the mount goes
		{DataDir: dir, BlockDevice: "/dev/null"},                                       // a character device
	} {
		var r *Refusal
		if _, err := ProbeVolume(p); !errors.As(err, &r) {
			t.Errorf("%+v: %v, want a refusal", p, err)
		}
	}
}
