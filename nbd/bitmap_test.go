package nbd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The dirty bitmap tests: a qcow2 gets a persistent bitmap (qemu-img
// bitmap --add --enable) after some data was already written, then
// qemu-io writes at awkward places; qemu-nbd -B and qemu-storage-daemon
// serve it, and DirtyExtents must report exactly the written ranges
// rounded out to the bitmap's granularity (clipped at the export's odd
// end), with base:allocation still answering beside it.

// bitmapWrites are [off, n) writes at the places that break rounding: a
// single byte, one spanning a granule boundary, whole granules, the last
// partial granule and the export's last byte.
func bitmapWrites(size, g int64) []span {
	return []span{{0, 1}, {g - 1, 2}, {5 * g, 3 * g}, {9*g + 17, 4096}, {size - 1, 1}, {size - 700, 100}}
}

// dirtyImage makes a qcow2 of size with data written before the bitmap
// (which must not show), a bitmap of granularity g, then the writes.
func dirtyImage(t *testing.T, size, g int64, writes []span) string {
	t.Helper()
	needBin(t, "qemu-io")
	img := t.TempDir() + "/disk.qcow2"
	qemuImg(t, "create", "-q", "-f", "qcow2", img, fmt.Sprint(size))
	qemuIO(t, img, fmt.Sprintf("write -P 0x11 %d %d", 2*g, 2*g))
	qemuImg(t, "bitmap", "--add", "--enable", "-g", fmt.Sprint(g), "-f", "qcow2", img, "b0")
	for i, w := range writes {
		qemuIO(t, img, fmt.Sprintf("write -P %d %d %d", i+1, w.off, w.n))
	}
	return img
}

func qemuIO(t *testing.T, img, cmd string) {
	t.Helper()
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", cmd, img).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io -c %q: %v\n%s", cmd, err, out)
	}
}

// wantDirty is what the bitmap must say of [0, size): each write rounded
// out to g, merged, clipped at size; the rest clean.
func wantDirty(size, g int64, writes []span) []DirtyExtent {
	dirty := make([]bool, (size+g-1)/g)
	for _, w := range writes {
		for i := w.off / g; i*g < w.off+w.n; i++ {
			dirty[i] = true
		}
	}
	var out []DirtyExtent
	for i, d := range dirty {
		off := int64(i) * g
		appendDirty(&out, DirtyExtent{Off: off, Len: min(g, size-off), Dirty: d})
	}
	return out
}

// clip is want cut to [off, off+n).
func clip(want []DirtyExtent, off, n int64) []DirtyExtent {
	var out []DirtyExtent
	for _, e := range want {
		s, t := max(e.Off, off), min(e.Off+e.Len, off+n)
		if t > s {
			appendDirty(&out, DirtyExtent{Off: s, Len: t - s, Dirty: e.Dirty})
		}
	}
	return out
}

// bitmapServers serve img with bitmap b0: qemu-nbd -B over each
// transport, and qemu-storage-daemon with the export's bitmaps list.
func bitmapServers(t *testing.T, img string) map[string]string {
	t.Helper()
	needBin(t, "qemu-nbd")
	needBin(t, "qemu-storage-daemon")
	return map[string]string{
		"qemu-nbd/unix": qemuNBD(t, overUnix, "qcow2", img, "-r", "-B", "b0"),
		"qemu-nbd/tcp":  qemuNBD(t, overTCP, "qcow2", img, "-r", "-B", "b0"),
		"qemu-storage-daemon": serve(t, overUnix, "disk", "qemu-storage-daemon",
			"--blockdev", "driver=file,node-name=file0,read-only=on,filename="+img,
			"--blockdev", "driver=qcow2,node-name=disk0,read-only=on,file=file0",
			"--nbd-server", "addr.type=fd,addr.str=3",
			"--export", "type=nbd,id=export0,node-name=disk0,name=disk,bitmaps.0=b0"),
	}
}

func TestDirtyBitmap(t *testing.T) {
	const size = 4<<20 + 1536 // a partial last granule whatever the granularity
	for _, g := range []int64{64 << 10, 16 << 10} {
		writes := bitmapWrites(size, g)
		img := dirtyImage(t, size, g, writes)
		want := wantDirty(size, g, writes)
		alloc := qemuMap(t, img)
		for name, uri := range bitmapServers(t, img) {
			t.Run(fmt.Sprintf("%dK/%s", g>>10, name), func(t *testing.T) {
				c := dial(t, uri, Options{DirtyBitmap: "b0"})
				if in := c.Info(); in.DirtyBitmap != "b0" || !in.BlockStatus || in.Size != size {
					t.Fatalf("info %+v", in)
				}
				got, err := c.DirtyExtents(0, size)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("dirty extents:\n got %+v\nwant %+v", got, want)
				}
				for _, w := range []span{{1, 3*g + 5}, {5*g + 1, g}, {size - 1, 1}, {size - g - 3, g + 3}} {
					got, err := c.DirtyExtents(w.off, w.n)
					if err != nil {
						t.Fatal(err)
					}
					if wantW := clip(want, w.off, w.n); !slices.Equal(got, wantW) {
						t.Fatalf("window [%d,+%d):\n got %+v\nwant %+v", w.off, w.n, got, wantW)
					}
				}
				// base:allocation still answers beside the bitmap.
				checkExtents(t, c, alloc)
			})
		}
	}
}

// A bitmap is asked for by name: one the server does not offer is
// refused at Dial, naming it and what is offered instead.
func TestDirtyBitmapMissing(t *testing.T) {
	const size = 1 << 20
	img := dirtyImage(t, size, 64<<10, []span{{0, 1}})
	for _, c := range []struct {
		name, uri string
		offered   []string
	}{
		{"other-name", qemuNBD(t, overUnix, "qcow2", img, "-r", "-B", "b0"), []string{"b0"}},
		{"not-exported", qemuNBD(t, overUnix, "qcow2", img, "-r"), nil},
		{"nbdkit", nbdkit(t, overUnix, "memory", "1M"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cl, err := Dial(ctx, c.uri, Options{DirtyBitmap: "nope"})
			if err == nil {
				cl.Close()
				t.Fatal("Dial succeeded; want the missing bitmap refused")
			}
			var be *BitmapError
			if !errors.As(err, &be) || !errors.Is(err, ErrNoBitmap) || !errors.Is(err, syscall.ENOENT) {
				t.Fatalf("got %v (%T), want a *BitmapError matching ErrNoBitmap and ENOENT", err, err)
			}
			if be.Bitmap != "nope" || !slices.Equal(be.Offered, c.offered) || !strings.Contains(err.Error(), `"nope"`) {
				t.Fatalf("got %+v: %v", be, err)
			}
		})
	}
}

// Without a bitmap selected, DirtyExtents is refused before sending; a
// bitmap with base:allocation switched off still works alone.
func TestDirtyBitmapUse(t *testing.T) {
	const size, g = 2 << 20, 64 << 10
	writes := []span{{3 * g, 1}}
	img := dirtyImage(t, size, g, writes)
	uri := qemuNBD(t, overUnix, "qcow2", img, "-r", "-B", "b0")
	plain := dial(t, uri, Options{})
	if _, err := plain.DirtyExtents(0, size); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("DirtyExtents without a bitmap: %v, want EOPNOTSUPP", err)
	}
	alone := dial(t, uri, Options{DirtyBitmap: "b0", NoBlockStatus: true})
	if alone.Info().BlockStatus {
		t.Fatal("base:allocation negotiated although NoBlockStatus")
	}
	got, err := alone.DirtyExtents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDirty(size, g, writes); !slices.Equal(got, want) {
		t.Fatalf("got %+v want %+v", got, want)
	}
	if _, err := alone.DirtyExtents(size-1, 2); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("range past the end: %v, want EINVAL", err)
	}
}

// Warm migration's case: the bitmap of a writable export grows with the
// writes made through it. qemu-storage-daemon serves it writable; our
// own writes must show up dirty at once.
func TestDirtyBitmapLive(t *testing.T) {
	const size, g = 4 << 20, 64 << 10
	img := dirtyImage(t, size, g, nil)
	uri := serve(t, overUnix, "disk", "qemu-storage-daemon",
		"--blockdev", "driver=file,node-name=file0,filename="+img,
		"--blockdev", "driver=qcow2,node-name=disk0,file=file0",
		"--nbd-server", "addr.type=fd,addr.str=3",
		"--export", "type=nbd,id=export0,node-name=disk0,name=disk,writable=on,bitmaps.0=b0")
	c := dial(t, uri, Options{DirtyBitmap: "b0"})
	got, err := c.DirtyExtents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDirty(size, g, nil); !slices.Equal(got, want) {
		t.Fatalf("before: got %+v want all clean", got)
	}
	writes := []span{{g + 7, 1}, {3*g - 1, 2}, {size - 4096, 4096}}
	for i, w := range writes {
		if _, err := c.WriteAt(random(uint64(i), w.n), w.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Zero(10*g, g, 0); err != nil { // zeroing dirties too
		t.Fatal(err)
	}
	writes = append(writes, span{10 * g, g})
	got, err = c.DirtyExtents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDirty(size, g, writes); !slices.Equal(got, want) {
		t.Fatalf("after writes:\n got %+v\nwant %+v", got, want)
	}
}

// A server that selected both contexts must send a chunk for each: a
// block status reply without the bitmap's, or with one for a context
// never selected, kills the connection as a broken protocol rather than
// reading as "clean".
func TestDirtyBitmapBrokenReply(t *testing.T) {
	ext := func(id uint32, n, flags uint32) []byte {
		return be.AppendUint32(be.AppendUint32(be.AppendUint32(nil, id), n), flags)
	}
	for _, c := range []struct {
		name   string
		chunks func(cookie uint64, f *fakeConn)
		want   string
	}{
		{"bitmap chunk missing", func(cookie uint64, f *fakeConn) {
			f.chunk(replyFlagDone, chunkBlockStatus, cookie, ext(9, 1<<20, 0))
		}, "without a chunk for context 10 (the dirty bitmap)"},
		{"unselected context", func(cookie uint64, f *fakeConn) {
			f.chunk(0, chunkBlockStatus, cookie, ext(9, 1<<20, 0))
			f.chunk(replyFlagDone, chunkBlockStatus, cookie, ext(77, 1<<20, stateDirty))
		}, "context 77, which we did not select"},
		{"two bitmap chunks", func(cookie uint64, f *fakeConn) {
			f.chunk(0, chunkBlockStatus, cookie, ext(10, 1<<20, 0))
			f.chunk(replyFlagDone, chunkBlockStatus, cookie, ext(10, 1<<20, stateDirty))
		}, "two block status chunks for context 10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			uri := fakeServer(t, fakeSetup{size: 1 << 20, contexts: []string{metaContextAllocation, metaContextBitmap + "b0"}},
				func(f *fakeConn) {
					r, _, ok := f.req()
					if ok && r.cmd == cmdBlockStatus {
						c.chunks(r.cookie, f)
					}
					f.reqs(1)
				})
			cl := dial(t, uri, Options{DirtyBitmap: "b0"})
			_, err := cl.DirtyExtents(0, 1<<20)
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a protocol error with %q", err, c.want)
			}
		})
	}
}
