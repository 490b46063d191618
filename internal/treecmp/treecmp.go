// Package treecmp compares two extracted directory trees, for tests: an
// archive extracted by ringcp against the same archive extracted by GNU
// tar.
package treecmp

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Compare fails t where got differs from want: names, types, bytes,
// permission bits (got never has set-user-ID, set-group-ID or sticky
// bits, which want may), symbolic link targets, which names are hard
// links of one another, and regular files' modification times.
func Compare(t testing.TB, want, got string) {
	t.Helper()
	wantLinks, gotLinks := map[uint64]string{}, map[uint64]string{}
	seen := 0
	err := filepath.WalkDir(want, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		if rel == "." {
			return nil
		}
		seen++
		compareOne(t, rel, path, filepath.Join(got, rel), wantLinks, gotLinks)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	filepath.WalkDir(got, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != got {
			count++
		}
		return nil
	})
	if count != seen {
		t.Errorf("%d entries extracted, %d expected", count, seen)
	}
}

func compareOne(t testing.TB, rel, wantPath, gotPath string, wantLinks, gotLinks map[uint64]string) {
	t.Helper()
	w, err := os.Lstat(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Lstat(gotPath)
	if err != nil {
		t.Errorf("%s: %v", rel, err)
		return
	}
	if w.Mode().Type() != g.Mode().Type() {
		t.Errorf("%s: type %v, want %v", rel, g.Mode().Type(), w.Mode().Type())
		return
	}
	if g.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		t.Errorf("%s: mode %v keeps a special bit", rel, g.Mode())
	}
	if w.Mode().Type() != fs.ModeSymlink && w.Mode().Perm() != g.Mode().Perm() {
		t.Errorf("%s: permissions %v, want %v", rel, g.Mode().Perm(), w.Mode().Perm())
	}
	switch {
	case w.Mode().IsRegular():
		a, _ := os.ReadFile(wantPath)
		b, _ := os.ReadFile(gotPath)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: %d bytes differ from the %d expected", rel, len(b), len(a))
		}
		if !w.ModTime().Equal(g.ModTime()) {
			t.Errorf("%s: modified %v, want %v", rel, g.ModTime(), w.ModTime())
		}
		sameLinks(t, rel, w, g, wantLinks, gotLinks)
	case w.Mode().Type() == fs.ModeSymlink:
		a, _ := os.Readlink(wantPath)
		b, _ := os.Readlink(gotPath)
		if a != b {
			t.Errorf("%s: link to %q, want %q", rel, b, a)
		}
	}
}

// sameLinks checks that names hard-linked together in want are in got.
func sameLinks(t testing.TB, rel string, w, g fs.FileInfo, wantLinks, gotLinks map[uint64]string) {
	t.Helper()
	wi, gi := w.Sys().(*syscall.Stat_t), g.Sys().(*syscall.Stat_t)
	if wi.Nlink != gi.Nlink {
		t.Errorf("%s: %d links, want %d", rel, gi.Nlink, wi.Nlink)
	}
	first, linked := wantLinks[wi.Ino]
	if !linked {
		wantLinks[wi.Ino], gotLinks[gi.Ino] = rel, rel
		return
	}
	if gotLinks[gi.Ino] != first {
		t.Errorf("%s: not a hard link of %s", rel, first)
	}
}
