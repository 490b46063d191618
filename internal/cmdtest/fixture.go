package cmdtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// Fixture is a folder with a 64 KiB SRC, an existing DST, a subfolder, a
// FIFO, a symlink to SRC and a symlink to nothing: the ends of command
// lines that must be refused with nothing written (Unchanged).
type Fixture struct {
	Dir, Src, Dst, New, Sub, Fifo, Link, Dangling string
	srcSum                                        [32]byte
	dstSnap                                       Snapshot
}

// DanglingTarget is where the fixture's dangling symlink points: a name
// in the subfolder, which must stay empty.
const DanglingTarget = "sub/nothing"

// NewFixture makes a Fixture in a new temporary folder of the test's.
func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	dir := t.TempDir()
	fx := &Fixture{Dir: dir, Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"),
		New: filepath.Join(dir, "new"), Sub: filepath.Join(dir, "sub"),
		Fifo: filepath.Join(dir, "fifo"), Link: filepath.Join(dir, "link"), Dangling: filepath.Join(dir, "dangling")}
	RandomFile(t, fx.Src, 64<<10, 1)
	RandomFile(t, fx.Dst, 100_000, 2)
	if err := os.Mkdir(fx.Sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fx.Fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fx.Src, fx.Link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(DanglingTarget, fx.Dangling); err != nil {
		t.Fatal(err)
	}
	fx.srcSum, fx.dstSnap = Digest(t, fx.Src), Snap(t, fx.Dst)
	return fx
}

// Expand fills in the fixture's paths for {src} {dst} {new} {dir} {fifo}
// {link} {dangling}; {img:FORMAT} makes a disk image with qemu-img
// (qemutest.DiskImage).
func (fx *Fixture) Expand(t testing.TB, args []string) []string {
	r := strings.NewReplacer("{src}", fx.Src, "{dst}", fx.Dst, "{new}", fx.New,
		"{dir}", fx.Sub, "{fifo}", fx.Fifo, "{link}", fx.Link, "{dangling}", fx.Dangling)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
		if kind, ok := strings.CutPrefix(a, "{img:"); ok {
			out[i] = qemutest.DiskImage(t, fx.Dir, strings.TrimSuffix(kind, "}"))
		}
	}
	return out
}

// Unchanged checks that nothing was written: SRC and DST as they were, no
// new DST, nothing new in the subfolder.
func (fx *Fixture) Unchanged(t testing.TB) {
	t.Helper()
	if Digest(t, fx.Src) != fx.srcSum {
		t.Error("SRC changed")
	}
	fx.dstSnap.Same(t)
	MustNotExist(t, fx.New)
	MustNotExist(t, "-") // a DST named - in the working folder
	if ents, _ := os.ReadDir(fx.Sub); len(ents) != 0 {
		t.Errorf("the folder DST named holds %d new entries", len(ents))
	}
}
