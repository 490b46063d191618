package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// Copies through a FUSE mount whose server opens files with
// FOPEN_DIRECT_IO (virtiofs cache=none, sshfs -o direct_io). io_uring
// completes a short request there as whole, with the wrong bytes
// (faultfs's TestDirectIOURing), so every fault must still end in an
// error, and DST must hold what the report says: never a complete-looking
// wrong copy.

// directSize is SRC's size: two 8 MiB blocks and a partial one, so that
// every block size has a first, a middle and a last, partial block.
const directSize = 16<<20 + 12345

// directBlockSizes are the block sizes the fault matrix copies with.
var directBlockSizes = []int{64 << 10, 1 << 20, 8 << 20}

// directFaultsAt are fault offsets: in the first block, in the middle,
// at the end of the last full block, and in the last, partial block. Each
// but the last is past the first 128 KiB FUSE request of a 1 MiB or 8 MiB
// block, where the kernel completes the block's read or write short,
// which io_uring would turn into a full-length success; a fault in a
// block's first request fails it whole.
var directFaultsAt = []int64{300000, 8<<20 + 5*faultfs.MaxRequest + 1234, 16<<20 - 5000, directSize - 100}

// directCase is one copy through a DirectIO mount that meets an EIO.
type directCase struct {
	engine copier.EngineChoice
	op     string // faultfs.OpRead on SRC or faultfs.OpWrite on DST
	bs     int
	at     int64
	dstOld bool
}

func (c directCase) String() string {
	return fmt.Sprintf("%s/%s/bs=%d/at=%d/existing=%v", c.engine, c.op, c.bs, c.at, c.dstOld)
}

func (c directCase) dstName() string {
	return fmt.Sprintf("dst-%s-%s-%d-%d-%v", c.engine, c.op, c.bs, c.at, c.dstOld)
}

func directCases() []directCase {
	var cases []directCase
	for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		for _, op := range []string{faultfs.OpRead, faultfs.OpWrite} {
			for _, bs := range directBlockSizes {
				for _, at := range directFaultsAt {
					for _, old := range []bool{false, true} {
						cases = append(cases, directCase{e, op, bs, at, old})
					}
				}
			}
		}
	}
	return cases
}

// needRootFUSE skips where faultfs cannot mount with mount(2).
func needRootFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("faultfs mounts with mount(2) here: needs root")
	}
}

// TestDirectIOFault: read faults on SRC and write faults on DST, at the
// first, a middle and the last partial block, with several block sizes, a
// new and an existing DST, engine auto and pool. Each copy must fail with
// an *engine.OpError naming the op, the faulted file, an offset within one
// FUSE request before the fault, and EIO; a new DST must be gone and an
// existing one must hold exactly the prefix the report claims.
func TestDirectIOFault(t *testing.T) {
	needRootFUSE(t)
	back := t.TempDir()
	src := noise(directSize, 21)
	writeFile(t, filepath.Join(back, "src"), src)
	for _, c := range directCases() {
		t.Run(c.String(), func(t *testing.T) {
			if c.engine == copier.EngineAuto {
				uringtest.NeedOn(t) // auto must not pick io_uring even where it is on
			}
			dst := c.dstName()
			if c.dstOld {
				writeFile(t, filepath.Join(back, dst), noise(1<<20, 22))
			}
			name, faulted := "src", "src"
			if c.op == faultfs.OpWrite {
				name, faulted = dst, writtenAs(dst, c.dstOld)
			}
			fs := faultfs.MountWith(t, back, faultfs.Options{DirectIO: true,
				Faults: []faultfs.Fault{{Op: c.op, Offset: c.at, Errno: syscall.EIO, Name: faulted}}})
			opts := copier.Options{Src: fs.Path("src"), Dst: fs.Path(dst), Engine: c.engine, BlockSize: c.bs, QueueDepth: 4}
			rep, err := copier.Copy(context.Background(), opts)
			checkOpError(t, err, c.op, fs.Path(name), c.at)
			if rep.DstState == copier.DstComplete || rep.Contiguous > c.at {
				t.Errorf("report: DST %v, contiguous %d; want a failed copy, at most %d", rep.DstState, rep.Contiguous, c.at)
			}
			if err := fs.Unmount(); err != nil {
				t.Errorf("a file under the mount is still held after the copy: %v", err)
			}
			checkDst(t, faultCase{dstOld: c.dstOld}, rep, filepath.Join(back, dst), src)
			mustNotExist(t, filepath.Join(back, writtenAs(dst, false)))
		})
	}
}

// checkOpError wants err to be an *engine.OpError of op on path wrapping
// EIO, at an offset no more than one FUSE request before the fault at.
func checkOpError(t *testing.T, err error, op, path string, at int64) {
	t.Helper()
	var oe *engine.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want an *engine.OpError wrapping EIO", err)
	}
	if oe.Op != op || oe.Path != path || oe.Offset > at || oe.Offset <= at-faultfs.MaxRequest {
		t.Errorf("error %q: want %s of %s at an offset in (%d, %d]", err, op, path, at-faultfs.MaxRequest, at)
	}
}

// TestDirectIOShortSource: SRC claims more bytes than the server serves
// (a file that shrank on the server). The copy must fail with
// engine.ErrSourceShrank on a read of SRC, never fill the tail with bytes
// from elsewhere.
func TestDirectIOShortSource(t *testing.T) {
	needRootFUSE(t)
	const real = 4<<20 + 4321
	back := t.TempDir()
	src := noise(real, 23)
	writeFile(t, filepath.Join(back, "src"), src)
	// 20000 claimed bytes end inside the block that holds the real end;
	// 1 MiB more also makes blocks wholly past it.
	for _, extra := range []int64{20000, 1<<20 + 777} {
		for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			for _, bs := range directBlockSizes {
				for _, old := range []bool{false, true} {
					shortSourceCase(t, back, src, extra, e, bs, old)
				}
			}
		}
	}
}

// shortSourceCase copies the inflated SRC in back with engine e, block size
// bs, to a new or an existing DST.
func shortSourceCase(t *testing.T, back string, src []byte, extra int64, e copier.EngineChoice, bs int, old bool) {
	real := int64(len(src))
	t.Run(fmt.Sprintf("extra=%d/%s/bs=%d/existing=%v", extra, e, bs, old), func(t *testing.T) {
		if e == copier.EngineAuto {
			uringtest.NeedOn(t)
		}
		dst := fmt.Sprintf("dst-%d-%s-%d-%v", extra, e, bs, old)
		if old {
			writeFile(t, filepath.Join(back, dst), noise(1<<20, 24))
		}
		fs := faultfs.MountWith(t, back, faultfs.Options{DirectIO: true, Inflate: map[string]int64{"src": extra}})
		rep, err := copier.Copy(context.Background(), copier.Options{Src: fs.Path("src"), Dst: fs.Path(dst),
			Engine: e, BlockSize: bs, QueueDepth: 4})
		var oe *engine.OpError
		if !errors.Is(err, engine.ErrSourceShrank) || !errors.As(err, &oe) || oe.Op != "read" || oe.Path != fs.Path("src") ||
			oe.Offset < real&^4095 || oe.Offset > real+extra {
			t.Fatalf("err = %v; want a read of %s near %d wrapping ErrSourceShrank", err, fs.Path("src"), real)
		}
		if rep.DstState == copier.DstComplete || rep.Contiguous > real {
			t.Errorf("report: DST %v, contiguous %d; want a failed copy, at most %d", rep.DstState, rep.Contiguous, real)
		}
		if err := fs.Unmount(); err != nil {
			t.Errorf("a file under the mount is still held after the copy: %v", err)
		}
		checkDst(t, faultCase{dstOld: old}, rep, filepath.Join(back, dst), src)
	})
}

// TestDirectIOCleanCopy: without faults, copies through the DirectIO
// mount (SRC, DST or both on it; DST new or existing) are byte-exact,
// engine auto chooses the pool and says why, naming the filesystem and
// the side, in the plan and in the report.
func TestDirectIOCleanCopy(t *testing.T) {
	needRootFUSE(t)
	uringtest.NeedOn(t)
	back, local := t.TempDir(), t.TempDir()
	fs := faultfs.MountWith(t, back, faultfs.Options{DirectIO: true})
	for _, size := range []int{0, 1, 511, 4097, 1<<20 + 3, 9<<20 + 5} {
		data := noise(size, uint64(size))
		name := fmt.Sprintf("src%d", size)
		writeFile(t, filepath.Join(back, name), data)
		writeFile(t, filepath.Join(local, name), data)
		layouts := []struct {
			tag, src, dst, side string
		}{
			{"both", fs.Path(name), fs.Path(name + ".copy"), "SRC"},
			{"src", fs.Path(name), filepath.Join(local, name+".copy"), "SRC"},
			{"dst", filepath.Join(local, name), fs.Path(name + ".copy2"), "DST"},
		}
		for _, l := range layouts {
			for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
				for _, old := range []bool{false, true} {
					t.Run(fmt.Sprintf("%d/%s/%s/existing=%v", size, l.tag, e, old), func(t *testing.T) {
						if old {
							writeFile(t, l.dst, noise(64<<10+1, 25))
						} else {
							os.Remove(l.dst)
						}
						cleanCopy(t, copier.Options{Src: l.src, Dst: l.dst, Engine: e}, l.side, data)
					})
				}
			}
		}
	}
}

// cleanCopy copies and checks the engine, the reason and the bytes.
func cleanCopy(t *testing.T, opts copier.Options, side string, data []byte) {
	t.Helper()
	p, err := copier.Prepare(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	if opts.Engine == copier.EngineAuto {
		want = fmt.Sprintf("io_uring is not used on fuse (%s ", side)
		if !strings.HasPrefix(p.FallbackReason, want) || !strings.Contains(p.FallbackReason, "short FUSE direct-I/O request") {
			t.Errorf("FallbackReason %q; want it to start %q and say why", p.FallbackReason, want)
		}
	}
	if p.Backend != copier.EnginePool {
		t.Errorf("Backend %s, want the pool", p.Backend)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != "pool" || rep.FallbackReason != p.FallbackReason || rep.DstState != copier.DstComplete {
		t.Errorf("report: engine %q, fallback %q, DST %v; want pool, %q, complete", rep.Engine, rep.FallbackReason, rep.DstState, p.FallbackReason)
	}
	compareFile(t, opts.Dst, data)
}

// TestDirectIOURingRefused: --engine uring with either side on FUSE is
// refused before DST is created or opened for writing, naming the
// filesystem, the side and why.
func TestDirectIOURingRefused(t *testing.T) {
	needRootFUSE(t)
	back, local := t.TempDir(), t.TempDir()
	data := noise(1<<20+3, 26)
	writeFile(t, filepath.Join(back, "src"), data)
	writeFile(t, filepath.Join(local, "src"), data)
	writeFile(t, filepath.Join(back, "old"), noise(4096, 27))
	writeFile(t, filepath.Join(local, "old"), noise(4096, 27))
	fs := faultfs.MountWith(t, back, faultfs.Options{DirectIO: true})
	cases := []struct {
		tag, src, dst, side string
	}{
		{"src", fs.Path("src"), filepath.Join(local, "new"), "SRC " + fs.Path("src")},
		{"dst-new", filepath.Join(local, "src"), fs.Path("new"), "DST " + fs.Path("new")},
		{"dst-existing", filepath.Join(local, "src"), fs.Path("old"), "DST " + fs.Path("old")},
		{"src-to-existing", fs.Path("src"), filepath.Join(local, "old"), "SRC " + fs.Path("src")},
	}
	for _, c := range cases {
		t.Run(c.tag, func(t *testing.T) {
			before, _ := os.Stat(c.dst)
			oldBytes, _ := os.ReadFile(c.dst)
			_, err := copier.Copy(context.Background(), copier.Options{Src: c.src, Dst: c.dst, Engine: copier.EngineUring})
			var re *copier.RefusedError
			want := fmt.Sprintf("Options.Engine uring: io_uring is not used on fuse (%s): the kernel can complete a short FUSE direct-I/O request as whole", c.side)
			if !errors.As(err, &re) || err.Error() != want {
				t.Fatalf("err = %v; want a *copier.RefusedError %q", err, want)
			}
			after, statErr := os.Stat(c.dst)
			switch {
			case before == nil && statErr == nil:
				t.Errorf("a refused copy created DST %s", c.dst)
			case before != nil && (statErr != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size()):
				t.Errorf("a refused copy changed DST %s: %v, %v -> %v", c.dst, before, statErr, after)
			case before != nil:
				if got, _ := os.ReadFile(c.dst); !bytes.Equal(got, oldBytes) {
					t.Errorf("a refused copy changed DST %s's bytes", c.dst)
				}
			}
		})
	}
}
