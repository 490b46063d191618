package nbd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// qemu-nbd serving a raw file with an odd size: handshake, sizes, block
// sizes, reads and writes byte-exact at awkward ranges with many in
// flight, write zeroes, trim and flush, over a Unix socket and over TCP.
func TestQemuRaw(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			// qemu rounds a raw file up to 512 bytes: 3 sectors past 4 MiB
			// keep the tail off 4096.
			const size = 4<<20 + 1536
			want := random(1, size)
			img := writeFile(t, "raw.img", want)
			c := dial(t, qemuNBD(t, tr, "raw", img), Options{})
			in := c.Info()
			if in.Size != size || in.Export != "disk" || !in.Structured || !in.BlockStatus {
				t.Fatalf("info %+v", in)
			}
			if bs := in.BlockSize; !bs.Advertised || bs.Min != 1 || bs.Preferred != 4096 || bs.Max != 32<<20 {
				t.Fatalf("block size %+v, want qemu's 1/4096/32M", bs)
			}
			if in.ReadOnly() || !in.CanFlush() || !in.CanZero() || !in.CanTrim() || !in.CanFUA() {
				t.Fatalf("flags %#x", in.Flags)
			}
			checkReads(t, c, want, awkward(size))
			writeSpans(t, c, want, disjoint(size))
			if err := c.Zero(100, 5000, NoHole); err != nil {
				t.Fatal(err)
			}
			clear(want[100:5100])
			if err := c.Zero(1<<20, 1<<20, FUA); err != nil {
				t.Fatal(err)
			}
			clear(want[1<<20 : 2<<20])
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			checkReads(t, c, want, awkward(size))
			disk, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(disk, want) {
				t.Fatalf("file after flush: %s", firstDiff(disk, want))
			}
			// Trim leaves the content undefined: only check it succeeds.
			if err := c.Trim(3<<20, 65536+7); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// writeSpans writes fresh data at each span, all in flight together, and
// applies it to want.
func writeSpans(t *testing.T, c *Client, want []byte, spans []span) {
	t.Helper()
	var reqs []Request
	for i, s := range spans {
		b := random(uint64(100+i), s.n)
		copy(want[s.off:], b)
		reqs = append(reqs, Request{Op: OpWrite, Off: s.off, Buf: b, Tag: uint64(i)})
	}
	for tag, cp := range submitAll(t, c, reqs) {
		if cp.Err != nil || cp.N != int64(len(reqs[tag].Buf)) {
			t.Fatalf("write [%d,+%d): n=%d err=%v", reqs[tag].Off, len(reqs[tag].Buf), cp.N, cp.Err)
		}
	}
}

// A sparse qcow2 over a sparse raw backing file: reads through the chain
// are byte-exact, our writes and zeroes land in the overlay, and Extents
// matches `qemu-img map` (zero = NBD_STATE_ZERO, !data = NBD_STATE_HOLE).
func TestQemuQcow2Backing(t *testing.T) {
	const size = 8 << 20
	dir := t.TempDir()
	base, overlay := dir+"/base.raw", dir+"/overlay.qcow2"
	want := make([]byte, size)
	sparseFile(t, base, size, want, map[int64]int64{0: 65536, 2 << 20: 128 << 10, 5<<20 + 4096: 4096})
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", overlay)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			c := dial(t, qemuNBD(t, tr, "qcow2", overlay), Options{})
			if c.Info().Size != size || !c.Info().BlockStatus {
				t.Fatalf("info %+v", c.Info())
			}
			checkReads(t, c, want, awkward(size))
			if tr == overUnix { // change the overlay once, check both ways
				writeSpans(t, c, want, []span{{4 << 20, 4097}, {1<<20 + 1, 10}, {7<<20 - 3, 3}})
				if err := c.Zero(2<<20, 64<<10, 0); err != nil { // over backing data
					t.Fatal(err)
				}
				clear(want[2<<20 : 2<<20+64<<10])
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got := readAll(t, c); !bytes.Equal(got, want) {
				t.Fatalf("whole export: %s", firstDiff(got, want))
			}
			checkExtents(t, c, qemuMap(t, overlay))
		})
	}
}

// Block status of a sparse raw file matches its SEEK_DATA/SEEK_HOLE map.
func TestQemuRawBlockStatus(t *testing.T) {
	const size = 6 << 20
	img := t.TempDir() + "/sparse.raw"
	want := make([]byte, size)
	sparseFile(t, img, size, want, map[int64]int64{1 << 20: 65536, 3 << 20: 4096, size - 8192: 8192})
	c := dial(t, qemuNBD(t, overUnix, "raw", img), Options{})
	checkExtents(t, c, seekMap(t, img, size))
	// A window in the middle, unaligned, is clipped exactly.
	ext, err := c.Extents(1<<20-1, 65538)
	if err != nil {
		t.Fatal(err)
	}
	wantExt := []Extent{{1<<20 - 1, 1, true, true}, {1 << 20, 65536, false, false}, {1<<20 + 65536, 1, true, true}}
	if !equalExtents(ext, wantExt) {
		t.Fatalf("window: got %+v want %+v", ext, wantExt)
	}
	if got := readAll(t, c); !bytes.Equal(got, want) {
		t.Fatalf("whole export: %s", firstDiff(got, want))
	}
}

// sparseFile makes a sparse file of size with random data at the given
// offsets (off -> length), mirrored into want.
func sparseFile(t *testing.T, path string, size int64, want []byte, data map[int64]int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, n := range data {
		b := random(uint64(off), n)
		copy(want[off:], b)
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
}

// qemuMap is `qemu-img map` of an image as extents.
func qemuMap(t *testing.T, image string) []Extent {
	t.Helper()
	out, err := exec.Command("qemu-img", "map", "-U", "--output=json", image).Output()
	if err != nil {
		t.Fatalf("qemu-img map: %v", err)
	}
	var m []struct {
		Start, Length int64
		Zero, Data    bool
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("qemu-img map: %v\n%s", err, out)
	}
	var ext []Extent
	for _, e := range m {
		appendExtent(&ext, Extent{Off: e.Start, Len: e.Length, Hole: !e.Data, Zero: e.Zero})
	}
	return ext
}

// seekMap maps a file with SEEK_DATA/SEEK_HOLE, as qemu's raw driver
// does: data is allocated, holes are allocated-not and read as zeroes.
func seekMap(t *testing.T, path string, size int64) []Extent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ext []Extent
	for pos := int64(0); pos < size; {
		data, err := unix.Seek(int(f.Fd()), pos, unix.SEEK_DATA)
		if err != nil { // ENXIO: a hole to the end
			data = size
		}
		if data > pos {
			appendExtent(&ext, Extent{Off: pos, Len: data - pos, Hole: true, Zero: true})
		}
		if data >= size {
			break
		}
		hole, err := unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			t.Fatal(err)
		}
		appendExtent(&ext, Extent{Off: data, Len: hole - data})
		pos = hole
	}
	return ext
}

// checkExtents compares Extents of the whole export with want.
func checkExtents(t *testing.T, c *Client, want []Extent) {
	t.Helper()
	got, err := c.Extents(0, c.Info().Size)
	if err != nil {
		t.Fatal(err)
	}
	if !equalExtents(got, want) {
		t.Fatalf("extents:\n got %+v\nwant %+v", got, want)
	}
}

func equalExtents(a, b []Extent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An export qemu-nbd does not have is named in the error.
func TestQemuUnknownExport(t *testing.T) {
	img := writeFile(t, "raw.img", make([]byte, 1<<20))
	uri := strings.Replace(qemuNBD(t, overUnix, "raw", img), "/disk?", "/nope?", 1)
	_, err := Dial(context.Background(), uri, Options{})
	if !errors.Is(err, ErrNoExport) || !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), `no export "nope"`) {
		t.Fatalf("got %v", err)
	}
}
