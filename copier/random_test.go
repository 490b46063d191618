package copier_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestRandomCopies is a differential test of whole copies: a sparse SRC
// (data, holes, written zeros, an odd end), random offsets and lengths,
// and every kind of DST (new, truncated, a range inside an existing file,
// loop devices with 512 and 4096 byte sectors full of old data or vouched
// zero), with random engine, direct, sparse and offload modes. DST must
// read back as the copier's rules say: the old bytes with the range laid
// over them, cut at the range's end where DST is truncated.
func TestRandomCopies(t *testing.T) {
	uringtest.NeedOn(t)
	seeds := uint64(60)
	if s := os.Getenv("RINGCP_RANDOM_SEEDS"); s != "" {
		seeds, _ = strconv.ParseUint(s, 10, 64)
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, seed) })
	}
}

func randomCopy(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 5151))
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := sparseLayout(t, rng, src, seed)
	size := int64(len(data))
	o := copier.Options{Src: src, Dst: filepath.Join(dir, "dst"),
		Engine:  engines[rng.IntN(2)],
		Direct:  []copier.DirectMode{copier.DirectAuto, copier.DirectNever}[rng.IntN(2)],
		Sparse:  []copier.SparseMode{copier.SparseAuto, copier.SparseAlways, copier.SparseNever}[rng.IntN(3)],
		Offload: []copier.OffloadMode{copier.OffloadAuto, copier.OffloadNever, copier.OffloadCopyRange}[rng.IntN(3)],
	}
	if rng.IntN(3) == 0 {
		o.BlockSize = []int{4096, 65536, 1 << 20}[rng.IntN(3)]
		o.QueueDepth = rng.IntN(4) + 1
	}
	// Offsets that are sector multiples keep O_DIRECT; others make auto
	// fall back to buffered.
	off := func(limit int64) int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return rng.Int64N(limit + 1)
		}
		return rng.Int64N(limit/512+1) * 512
	}
	o.SrcOffset = off(size)
	length := size - o.SrcOffset
	if rng.IntN(2) == 0 {
		o.Length, o.LengthSet = rng.Int64N(length+1), true
		length = o.Length
	}
	kind := []string{"new", "existing", "range", "device", "device"}[rng.IntN(5)]
	var old []byte
	truncate := false
	switch kind {
	case "new":
		o.DstOffset = off(1 << 20)
	case "existing", "range":
		old = randomBytes(rng.Int64N(3<<20), seed+1)
		writeFile(t, o.Dst, old)
		if kind == "range" {
			o.DstOffset = off(1 << 20)
			o.LengthSet = true
			o.Length = length
		}
		truncate = o.DstOffset == 0 && !o.LengthSet
	case "device":
		o.Offload = copier.OffloadAuto // forced offload is refused for devices
		sector := []int{512, 4096}[rng.IntN(2)]
		o.DstOffset = off(1<<20) / int64(sector) * int64(sector)
		if rng.IntN(2) == 0 {
			o.DstOffset += rng.Int64N(int64(sector)) // buffered DST
		}
		devSize := (o.DstOffset + length + int64(rng.IntN(3))*int64(sector) + int64(sector) - 1) / int64(sector) * int64(sector)
		devSize = max(devSize, 1<<20)
		dev, _ := blocktest.Device(t, devSize, "--direct-io=on", "--sector-size", strconv.Itoa(sector))
		o.Dst = dev
		old = make([]byte, devSize)
		if o.TargetIsZero = rng.IntN(3) == 0; !o.TargetIsZero {
			old = randomBytes(devSize, seed+2)
			writeFile(t, dev, old)
		}
	}
	name := fmt.Sprintf("%s: %s %s src+%d dst+%d len=%d(set=%v) engine=%s direct=%s sparse=%s offload=%s bs=%d qd=%d zero=%v",
		kind, src, o.Dst, o.SrcOffset, o.DstOffset, length, o.LengthSet, o.Engine, o.Direct, o.Sparse, o.Offload, o.BlockSize, o.QueueDepth, o.TargetIsZero)
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	end := o.DstOffset + length
	want := make([]byte, max(int64(len(old)), end))
	copy(want, old)
	copy(want[o.DstOffset:], data[o.SrcOffset:o.SrcOffset+length])
	if truncate || kind == "new" {
		want = want[:end]
	}
	if kind == "device" {
		compareDevicePrefix(t, o.Dst, want)
	} else {
		compareFile(t, o.Dst, want)
	}
	if rep.Offload == "" && rep.Bytes+rep.BytesHoles+rep.BytesZeroed != length {
		t.Fatalf("%s: data %d + holes %d + zeroed %d, want %d", name, rep.Bytes, rep.BytesHoles, rep.BytesZeroed, length)
	}
}

// sparseLayout writes a random sparse file at path and returns its bytes.
func sparseLayout(t *testing.T, rng *rand.Rand, path string, seed uint64) []byte {
	t.Helper()
	return enginetest.MakeSparse(t, path, enginetest.RandomLayout(rng), seed)
}
