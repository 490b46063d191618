package align

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// checkGeometry checks what every Geometry from Probe promises.
func checkGeometry(t *testing.T, g Geometry) {
	t.Helper()
	for name, v := range map[string]int{"MemAlign": g.MemAlign, "OffsetAlign": g.OffsetAlign} {
		if v <= 0 || v&(v-1) != 0 {
			t.Errorf("%s = %d, want a power of two", name, v)
		}
	}
	for name, v := range map[string]int{"LogicalBlockSize": g.LogicalBlockSize, "PhysicalBlockSize": g.PhysicalBlockSize} {
		if v != 0 && (v < 512 || v&(v-1) != 0) {
			t.Errorf("%s = %d, want 0 or a power of two >= 512", name, v)
		}
	}
	if g.LogicalBlockSize > 0 && g.PhysicalBlockSize > 0 && g.PhysicalBlockSize < g.LogicalBlockSize {
		t.Errorf("physical block %d < logical block %d", g.PhysicalBlockSize, g.LogicalBlockSize)
	}
	if g.OptimalIO < 0 || g.MaxIO < 0 || g.Size < 0 {
		t.Errorf("negative figure: OptimalIO %d MaxIO %d Size %d", g.OptimalIO, g.MaxIO, g.Size)
	}
	if len(g.Notes) < 3 {
		t.Errorf("only %d notes: %q", len(g.Notes), g.Notes)
	}
}

// hasNote reports whether some note contains s.
func hasNote(g Geometry, s string) bool {
	return strings.Contains(strings.Join(g.Notes, "\n"), s)
}

// kernelAtLeast reports whether the running kernel is major.minor or newer.
func kernelAtLeast(t *testing.T, major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var maj, min int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &maj, &min); err != nil {
		t.Fatalf("kernel release %q: %v", u.Release[:], err)
	}
	return maj > major || maj == major && min >= minor
}

// fsMagic returns the statfs f_type of the file system holding path.
func fsMagic(t *testing.T, path string) int64 {
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		t.Fatal(err)
	}
	return int64(s.Type)
}

func probePath(t *testing.T, path string, flag int) Geometry {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := Probe(f)
	if err != nil {
		t.Fatalf("Probe(%s): %v", path, err)
	}
	if g.Path != path {
		t.Errorf("Path %q, want %q", g.Path, path)
	}
	t.Logf("%s: %+v", path, g)
	return g
}

func TestProbeRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, 12345), 0o600); err != nil {
		t.Fatal(err)
	}
	g := probePath(t, path, os.O_RDONLY)
	checkGeometry(t, g)
	if g.Size != 12345 || g.IsBlockDevice || !g.DirectSupported {
		t.Errorf("Size %d IsBlockDevice %t DirectSupported %t, want 12345 false true",
			g.Size, g.IsBlockDevice, g.DirectSupported)
	}
	if fsMagic(t, dir) != unix.EXT4_SUPER_MAGIC {
		t.Logf("%s is not on ext4: only generic checks", dir)
		return
	}
	// ext4 sits on a block device, and since 6.1 reports through statx
	// the device's logical block size as dio_offset_align: two sources
	// (statx, sysfs) that must agree.
	if g.LogicalBlockSize == 0 || g.MaxIO == 0 {
		t.Errorf("ext4 backing device not found: logical %d, max I/O %d", g.LogicalBlockSize, g.MaxIO)
	}
	if kernelAtLeast(t, 6, 1) {
		if !hasNote(g, "(statx dio_offset_align)") || g.OffsetAlign != g.LogicalBlockSize {
			t.Errorf("OffsetAlign %d, logical %d; want equal, from statx", g.OffsetAlign, g.LogicalBlockSize)
		}
	}
	checkDirectIO(t, path, g, true)
}

func TestProbeTmpfs(t *testing.T) {
	const shm = "/dev/shm"
	if _, err := os.Stat(shm); err != nil || fsMagic(t, shm) != unix.TMPFS_MAGIC {
		t.Skipf("%s is not a tmpfs here", shm)
	}
	f, err := os.CreateTemp(shm, "align-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.Write(make([]byte, 5000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g := probePath(t, f.Name(), os.O_RDWR)
	checkGeometry(t, g)
	if g.Size != 5000 || g.LogicalBlockSize != 0 || g.PhysicalBlockSize != 0 || g.MaxIO != 0 {
		t.Errorf("tmpfs: Size %d logical %d physical %d max I/O %d, want 5000 0 0 0",
			g.Size, g.LogicalBlockSize, g.PhysicalBlockSize, g.MaxIO)
	}
	if !hasNote(g, "no block device behind") {
		t.Errorf("no note says tmpfs has no block device: %q", g.Notes)
	}
	// Without statx dio figures (tmpfs gives none up to at least 6.18)
	// both alignments fall back to 4096.
	if !hasNote(g, "statx dio_") && (g.MemAlign != 4096 || g.OffsetAlign != 4096) {
		t.Errorf("fallback alignments %d/%d, want 4096", g.MemAlign, g.OffsetAlign)
	}
	// tmpfs accepts O_DIRECT since Linux 6.6; it does not enforce
	// alignment, so only the positive half of the check applies.
	checkDirectIO(t, f.Name(), g, false)
}

func TestProbeCharDevice(t *testing.T) {
	g := probePath(t, "/dev/null", os.O_RDONLY)
	if g.IsBlockDevice || g.DirectSupported || g.Size != 0 || g.LogicalBlockSize != 0 {
		t.Errorf("/dev/null: %+v", g)
	}
	checkGeometry(t, g)
}

func TestProbeClosedFile(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Probe(f); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Probe on a closed file: %v, want os.ErrClosed", err)
	}
}
