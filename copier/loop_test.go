package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestLoopDevices copies file -> device -> device -> file through loop
// devices with O_DIRECT to their backing files, 512 and 4096 byte sectors,
// with both engines, and checks every hop byte for byte.
func TestLoopDevices(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, sector := range []int{512, 4096} {
			t.Run(fmt.Sprintf("%s/sector=%d", eng, sector), func(t *testing.T) {
				const size = 48<<20 + 4096*3
				a, _ := blocktest.Device(t, size, "--direct-io=on", "--sector-size", strconv.Itoa(sector))
				b, _ := blocktest.Device(t, size+1<<20, "--direct-io=on", "--sector-size", strconv.Itoa(sector))
				dir := t.TempDir()
				src, back := filepath.Join(dir, "image"), filepath.Join(dir, "back")
				data := randomBytes(size, uint64(sector))
				writeFile(t, src, data)
				hops := [][2]string{{src, a}, {a, b}, {b, back}}
				for _, h := range hops {
					o := copier.Options{Src: h[0], Dst: h[1], Engine: eng, Direct: copier.DirectAlways}
					if h[0] == b {
						o.Length, o.LengthSet = size, true // b is bigger than the image
					}
					rep, err := copier.Copy(context.Background(), o)
					if err != nil {
						t.Fatalf("%s -> %s: %v", h[0], h[1], err)
					}
					if rep.Bytes != size || !rep.DirectSrc || !rep.DirectDst {
						t.Fatalf("%s -> %s: %+v", h[0], h[1], rep)
					}
				}
				compareFile(t, back, data)
				compareDevicePrefix(t, a, data)
			})
		}
	}
}

// TestDeviceTooSmallIsRefusedUntouched: a DST device smaller than the copy
// is refused before anything is written to it.
func TestDeviceTooSmallIsRefusedUntouched(t *testing.T) {
	dev, _ := blocktest.Device(t, 1<<20, "--direct-io=on")
	marker := randomBytes(1<<20, 9)
	writeFile(t, dev, marker)
	src := filepath.Join(t.TempDir(), "src")
	writeFile(t, src, randomBytes(1<<20+512, 10))
	_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dev})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "too small") {
		t.Fatalf("err = %v, want a refusal naming the size", err)
	}
	compareDevicePrefix(t, dev, marker)
}

// TestLoopOddRangeTail: a range whose length is not a sector multiple onto a
// 4096-sector device: the tail goes through the page cache, the rest of the
// last sector keeps its old bytes.
func TestLoopOddRangeTail(t *testing.T) {
	dev, _ := blocktest.Device(t, 1<<20, "--direct-io=on", "--sector-size", "4096")
	old := randomBytes(1<<20, 11)
	writeFile(t, dev, old)
	src := filepath.Join(t.TempDir(), "src")
	data := randomBytes(10_001, 12)
	writeFile(t, src, data)
	o := copier.Options{Src: src, Dst: dev, DstOffset: 8192}
	if _, err := copier.Copy(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), old...)
	copy(want[8192:], data)
	compareDevicePrefix(t, dev, want)
}

func compareDevicePrefix(t *testing.T, dev string, want []byte) {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s does not hold the expected bytes", dev)
	}
}
