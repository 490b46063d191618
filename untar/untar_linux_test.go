package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/treecmp"
)

// member is one entry of an archive a test writes with archive/tar.
type member struct {
	name, link string
	typ        byte
	mode       int64
	data       string
	size       int64 // declared size when not len(data) (a lying header)
}

// archive writes members as a tar; cut, when positive, keeps only its
// first cut bytes.
func archive(t *testing.T, members []member, cut int) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Linkname: m.link, Typeflag: m.typ, Mode: m.mode, Size: int64(len(m.data)),
			ModTime: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Format: tar.FormatPAX}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if m.typ != tar.TypeReg {
			h.Size = 0
		}
		if m.size > 0 {
			h.Size = m.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.size > 0 {
			// A lying header: its data ends the archive.
			b.WriteString(m.data)
			return b.Bytes()
		}
		if _, err := tw.Write([]byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if cut > 0 {
		return b.Bytes()[:cut]
	}
	return b.Bytes()
}

// place is a test's folder: dest, where archives are extracted, and
// outside beside it with a file, which no archive may reach.
type place struct{ dest, outside string }

func newPlace(t *testing.T) place {
	base := t.TempDir()
	p := place{dest: filepath.Join(base, "dest"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{p.dest, p.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.outside, "secret"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// untouched fails the test when anything outside dest changed.
func (p place) untouched(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir(p.outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries", len(entries))
	}
	if b, err := os.ReadFile(filepath.Join(p.outside, "secret")); err != nil || string(b) != "keep" {
		t.Errorf("outside/secret is %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(p.dest)); len(entries) != 2 {
		t.Errorf("dest's parent holds %d entries", len(entries))
	}
}

func extract(p place, data []byte) (Stats, error) {
	return Extract(context.Background(), bytes.NewReader(data), p.dest, Options{})
}

// TestExtractHostile: each archive reaches, or tries to reach, outside
// dest; the extraction fails naming the member, and nothing outside
// changes.
func TestExtractHostile(t *testing.T) {
	reg, dir, sym, lnk := byte(tar.TypeReg), byte(tar.TypeDir), byte(tar.TypeSymlink), byte(tar.TypeLink)
	for _, c := range []struct {
		name    string
		members []member
		cut     int
		plant   string // a symbolic link planted in dest as "p", to outside
		want    string // in the error
	}{
		{name: "dotdot", members: []member{{name: "../outside/secret", typ: reg, data: "x"}}, want: `".."`},
		{name: "dotdot inside", members: []member{{name: "a/../../outside/secret", typ: reg, data: "x"}}, want: `".."`},
		{name: "symlink out", members: []member{{name: "l", link: "../outside", typ: sym}, {name: "l/secret", typ: reg, data: "x"}}, want: "climbs"},
		{name: "symlink absolute", members: []member{{name: "l", link: "/etc", typ: sym}}, want: "absolute"},
		{name: "symlink dotdot after a name", members: []member{{name: "x", link: ".", typ: sym}, {name: "l", link: "x/x/../..", typ: sym}}, want: "after a name"},
		{name: "symlink then a file through it", members: []member{{name: "d", typ: dir}, {name: "l", link: "d", typ: sym}, {name: "l/f", typ: reg, data: "x"}}, want: "without following a link"},
		{name: "planted symlink", plant: "p", members: []member{{name: "p/secret", typ: reg, data: "x"}}, want: "without following a link"},
		{name: "hard link out", members: []member{{name: "h", link: "../outside/secret", typ: lnk}}, want: "outside the volume"},
		{name: "hard link through a symlink", plant: "p", members: []member{{name: "h", link: "p/secret", typ: lnk}}, want: "without following a link"},
		{name: "device", members: []member{{name: "null", typ: tar.TypeChar}}, want: "device"},
		{name: "huge declared size", members: []member{{name: "big", typ: reg, data: "only this", size: 1 << 40}}, want: "big"},
		{name: "cut at a member's end", members: []member{{name: "a", typ: tar.TypeReg, data: "hello"}, {name: "b", typ: tar.TypeReg, data: "world"}}, cut: 1024, want: "end-of-archive marker"},
		{name: "truncated header", members: []member{{name: "a", typ: reg, data: "hello"}, {name: "b", typ: reg, data: "world"}}, cut: 1024 + 100, want: "reading the archive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPlace(t)
			if c.plant != "" {
				if err := os.Symlink(p.outside, filepath.Join(p.dest, c.plant)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := extract(p, archive(t, c.members, c.cut))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("extraction: %v; want an error saying %q", err, c.want)
			}
			p.untouched(t)
		})
	}
}

// TestExtractReplacesPlantedLinks: a member whose name is a symbolic
// link or a hard link already there replaces it; the file it led to is
// not written.
func TestExtractReplacesPlantedLinks(t *testing.T) {
	p := newPlace(t)
	secret := filepath.Join(p.outside, "secret")
	if err := os.Symlink(secret, filepath.Join(p.dest, "s")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(p.dest, "h")); err != nil {
		t.Fatal(err)
	}
	data := archive(t, []member{{name: "s", typ: tar.TypeReg, data: "new"}, {name: "h", typ: tar.TypeReg, data: "new"}}, 0)
	if _, err := extract(p, data); err != nil {
		t.Fatal(err)
	}
	p.untouched(t)
	for _, n := range []string{"s", "h"} {
		if b, err := os.ReadFile(filepath.Join(p.dest, n)); err != nil || string(b) != "new" {
			t.Errorf("%s: %q, %v", n, b, err)
		}
	}
}

// TestExtractNamesAndModes: a leading "/" is dropped (the member lands
// beneath dest), set-user-ID and sticky bits are dropped, a read-only
// directory still receives its members and gets its mode at the end.
func TestExtractNamesAndModes(t *testing.T) {
	p := newPlace(t)
	data := archive(t, []member{
		{name: "/abs/file", typ: tar.TypeReg, data: "abs"},
		{name: "ro/", typ: tar.TypeDir, mode: 0o555},
		{name: "ro/inside", typ: tar.TypeReg, data: "in", mode: 0o4755},
		{name: "sticky/", typ: tar.TypeDir, mode: 0o1777},
	}, 0)
	st, err := extract(p, data)
	if err != nil {
		t.Fatal(err)
	}
	p.untouched(t)
	if b, err := os.ReadFile(filepath.Join(p.dest, "abs", "file")); err != nil || string(b) != "abs" {
		t.Errorf("abs/file: %q, %v", b, err)
	}
	for name, want := range map[string]fs.FileMode{"ro": fs.ModeDir | 0o555, "ro/inside": 0o755, "sticky": fs.ModeDir | 0o777} {
		fi, err := os.Lstat(filepath.Join(p.dest, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
	if st.Files != 2 || st.Dirs != 2 || st.Bytes != 5 {
		t.Errorf("stats %+v", st)
	}
}

// TestExtractLikeGNUTar: a tree archived by GNU tar extracts as GNU tar
// extracts it (--preserve-permissions --no-same-owner, as CDI runs it):
// the same names, types, bytes, permission bits, link targets, hard
// links and file times.
func TestExtractLikeGNUTar(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("GNU tar not found (Debian: tar)")
	}
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	writeTree(t, tree)
	tarball := filepath.Join(base, "a.tar")
	run(t, "tar", "-cf", tarball, "-C", tree, ".")
	gnu, ours := filepath.Join(base, "gnu"), filepath.Join(base, "ours")
	os.Mkdir(gnu, 0o755)
	os.Mkdir(ours, 0o755)
	run(t, "tar", "--preserve-permissions", "--no-same-owner", "-xf", tarball, "-C", gnu)
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(context.Background(), bytes.NewReader(data), ours, Options{}); err != nil {
		t.Fatal(err)
	}
	treecmp.Compare(t, gnu, ours)
}

// writeTree makes files of awkward sizes and modes, directories, a
// read-only one, a relative symbolic link, a hard link and a FIFO.
func writeTree(t *testing.T, tree string) {
	t.Helper()
	for _, d := range []string{"", "d", "d/e", "ro"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range []int{0, 1, 511, 4096, 4097, 1<<20 + 3} {
		b := bytes.Repeat([]byte{byte(i + 1), 0, 7}, n/3+1)[:n]
		if err := os.WriteFile(filepath.Join(tree, "d", "e", "f"+string(rune('a'+i))), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tree, "ro", "x"), []byte("x"), 0o755)
	os.WriteFile(filepath.Join(tree, "setuid"), []byte("s"), 0o644)
	os.Chmod(filepath.Join(tree, "setuid"), 0o4755)
	os.Symlink("d/e/fb", filepath.Join(tree, "link"))
	os.Symlink("../../ro/x", filepath.Join(tree, "d", "e", "up"))
	os.Link(filepath.Join(tree, "d", "e", "fc"), filepath.Join(tree, "hard"))
	syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o600)
	os.Chmod(filepath.Join(tree, "ro"), 0o555)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(tree, "d", "e"), old, old)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// Context: a cancelled context stops the extraction before its next
// member.
func TestExtractStops(t *testing.T) {
	p := newPlace(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Extract(ctx, bytes.NewReader(archive(t, []member{{name: "a", typ: tar.TypeReg, data: "a"}}, 0)), p.dest, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want context.Canceled", err)
	}
}
