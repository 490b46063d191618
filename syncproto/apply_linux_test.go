package syncproto

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/synctest"
)

// The target applies changes several at once (applier.go) and folds
// them in the stream's order. These tests give it many changes in
// flight at the awkward places, on a file and on a loop device written
// with O_DIRECT, and a DST that fails or lies mid-batch.

// scattered is old made size bytes long (grown with random bytes) with
// n changes at random places: a flipped byte, a whole granule, an odd
// run of new bytes up to 3 MiB (several data frames), an odd run of
// zeros, and the last bytes.
func scattered(seed uint64, old []byte, size int64, n int) []byte {
	src := synctest.Random(seed, size)
	copy(src, old[:min(int64(len(old)), size)])
	if size == 0 {
		return src
	}
	r := rand.New(rand.NewPCG(seed, 7))
	for range n {
		off := r.Int64N(size)
		switch r.IntN(5) {
		case 0:
			src[off] ^= 0x5a
		case 1:
			g := off / 4096 * 4096
			copy(src[g:min(g+4096, size)], synctest.Random(seed+uint64(off), 4096))
		case 2:
			end := min(off+r.Int64N(3<<20)+1, size)
			copy(src[off:end], synctest.Random(seed^uint64(off), end-off))
		case 3:
			clear(src[off:min(off+r.Int64N(300<<10)+1, size)])
		case 4:
			src[size-1-r.Int64N(min(size, 5000))] ^= 0xa5
		}
	}
	return src
}

// TestApplyManyChanges pushes and pulls SRCs with hundreds of scattered
// changes, at the awkward sizes, grown and shrunk, into a file and onto
// a loop device: DST ends equal to SRC byte for byte, and the counts are
// the model's (no granule written that did not differ).
func TestApplyManyChanges(t *testing.T) {
	const oldSize = 6<<20 + 4097
	old := synctest.Random(11, oldSize)
	sizes := []int64{oldSize, 6 << 20, 6<<20 + 1, 6<<20 + 511, 9<<20 + 4097, 2<<20 + 511, 0}
	for _, g := range []int{512, 4096} {
		for i, size := range sizes {
			for _, dir := range []string{"push", "pull"} {
				t.Run(fmt.Sprintf("%d/%d/%s", g, size, dir), func(t *testing.T) {
					c := synctest.Case{Src: scattered(uint64(100+i), old, size, 400), Dst: old}
					d := t.TempDir()
					srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
					synctest.WriteFile(t, srcPath, c.Src)
					synctest.WriteFile(t, dstPath, c.Dst)
					opt := Options{Granule: g, Window: 64 * g, Workers: 3}
					var cl, sv Result
					var cerr, serr error
					if dir == "push" {
						cl, sv, cerr, serr = push(t, context.Background(), srcPath, dstPath, opt)
					} else {
						cl, sv, cerr, serr = pull(t, context.Background(), srcPath, dstPath, blocksync.TargetOptions{}, opt)
					}
					if cerr != nil || serr != nil {
						t.Fatalf("client: %v; server: %v", cerr, serr)
					}
					synctest.Same(t, dstPath, c.Src)
					checkResult(t, cl, c, g)
					checkResult(t, sv, c, g)
				})
			}
		}
	}
}

// TestApplyManyChangesDevice is the same onto a loop device of 4096-byte
// sectors, written with O_DIRECT: the device keeps its size, and what
// lies past SRC's end is left alone.
func TestApplyManyChangesDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	const devSize = 10 << 20
	old := synctest.Random(12, devSize)
	for _, g := range []int{512, 4096} {
		for i, size := range []int64{devSize, 6<<20 + 4097, 6<<20 + 511, 1} {
			t.Run(fmt.Sprintf("%d/%d", g, size), func(t *testing.T) {
				dev, _ := blocktest.Device(t, devSize, "--direct-io=on", "--sector-size", "4096")
				writeDev(t, dev, old)
				src := scattered(uint64(200+i), old, size, 400)
				srcPath := filepath.Join(t.TempDir(), "src")
				synctest.WriteFile(t, srcPath, src)
				cl, _, cerr, serr := push(t, context.Background(), srcPath, dev, Options{Granule: g, Window: 64 * g, Workers: 3})
				if cerr != nil || serr != nil {
					t.Fatalf("client: %v; server: %v", cerr, serr)
				}
				got := readAll(t, dev)
				synctest.SameBytes(t, dev, got[:size], src)
				synctest.SameBytes(t, dev+" past SRC's end", got[size:], old[size:])
				written, zeroed, _ := synctest.Expect(synctest.Case{Src: src, Dst: old}, g)
				if cl.Written != written || cl.Zeroed != zeroed {
					t.Errorf("wrote %d and zeroed %d bytes, want %d and %d", cl.Written, cl.Zeroed, written, zeroed)
				}
			})
		}
	}
}

// writeDev writes b at the start of dev.
func writeDev(t *testing.T, dev string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestApplyWriteFailsMidBatch: a write in the middle of many changes in
// flight fails (EIO from the filesystem); the sync fails on both sides,
// the error names the write, DST's path and the offset, and unwraps to
// the errno, whatever the writes around it did.
func TestApplyWriteFailsMidBatch(t *testing.T) {
	const size, faultAt = 8 << 20, 5<<20 + 100
	back := t.TempDir()
	fs := faultfs.Mount(t, back, faultfs.Fault{Op: faultfs.OpWrite, Offset: faultAt, Errno: syscall.EIO, Name: "dst"})
	old := synctest.Random(13, size)
	src := scattered(14, old, size, 600)
	src[faultAt] ^= 0xff // the granule the fault is in differs
	local := t.TempDir()
	synctest.WriteFile(t, filepath.Join(local, "src"), src)
	synctest.WriteFile(t, filepath.Join(back, "dst"), old)
	for _, g := range []int{4096, 64 << 10} {
		t.Run(fmt.Sprint(g), func(t *testing.T) {
			_, _, cerr, serr := push(t, context.Background(), filepath.Join(local, "src"), fs.Path("dst"), Options{Granule: g})
			for side, err := range map[string]error{"client": cerr, "server": serr} {
				var oe *blocksync.OpError
				if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) || oe.Op != "write" || oe.Path != fs.Path("dst") ||
					oe.Offset > faultAt || oe.Offset+MaxData <= faultAt {
					t.Errorf("%s: got %v; want the write error on %s near offset %d", side, err, fs.Path("dst"), faultAt)
				}
			}
			var re *RemoteError
			if !errors.As(cerr, &re) {
				t.Errorf("client: %v (%T), want the peer's error", cerr, cerr)
			}
		})
	}
}

// liar writes what it is given except at one offset, where it writes
// other bytes and says it wrote them: the read-back of that change
// differs from what was sent, and the end-to-end check must say so.
type liar struct {
	blocksync.Target
	at int64
}

func (l liar) WriteAt(p []byte, off int64) (int, error) {
	if off <= l.at && l.at < off+int64(len(p)) {
		q := append([]byte(nil), p...)
		q[l.at-off] ^= 1
		return l.Target.WriteAt(q, off)
	}
	return l.Target.WriteAt(p, off)
}

// TestApplyReadBackMismatch: one change among hundreds in flight lands
// wrong on DST (a direct DST on a loop device, the server's own path):
// the sync fails with a *MismatchError, whichever order the writes
// completed in.
func TestApplyReadBackMismatch(t *testing.T) {
	blocktest.NeedRoot(t)
	const size = 8 << 20
	old := synctest.Random(15, size)
	src := scattered(16, old, size, 600)
	at := int64(3<<20 + 4097)
	src[at] ^= 0x80
	dev, _ := blocktest.Device(t, size, "--direct-io=on", "--sector-size", "4096")
	writeDev(t, dev, old)
	srcPath := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, srcPath, src)
	dst, err := blocksync.OpenTarget(dev, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	direct := blocksync.NewDirect(dst)
	defer direct.Release()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{})
	_, err = Pull(context.Background(), c, srcPath, liar{direct, at}, Options{})
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MismatchError", err)
	}
	if _, serr := sv.wait(t); !errors.As(serr, &me) {
		t.Fatalf("server: %v, want the mismatch relayed", serr)
	}
}
