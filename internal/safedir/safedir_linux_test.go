package safedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenPrivate: a folder is made 0700 and taken; one open to others,
// a symlink to a folder, or a file is refused with an *OwnerError.
func TestOpenPrivate(t *testing.T) {
	base := t.TempDir()
	made := filepath.Join(base, "made")
	d, err := OpenPrivate(made)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if fi, err := os.Stat(made); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want 0700", made, fi.Mode(), err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(made, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for path, says := range map[string]string{open: "may be written by others", link: "symlink", file: "symlink or a file"} {
		var owner *OwnerError
		if d, err := OpenPrivate(path); !errors.As(err, &owner) || !contains(err, says) {
			if d != nil {
				d.Close()
			}
			t.Errorf("OpenPrivate(%s): %v; want an OwnerError saying %q", path, err, says)
		}
	}
}

// TestCreateNeverFollows: Create fails on anything already there, a
// symlink to a file above all; OpenFile does not follow one; Replace
// never writes through a symlink planted as its temporary; ReadOwn refuses
// a file others may write.
func TestCreateNeverFollows(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.Symlink(victim, filepath.Join(base, "planted"))
	if f, err := d.Create("planted", "planted", unix.O_WRONLY, 0o644); !errors.Is(err, unix.EEXIST) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Create over a symlink: %v; want EEXIST", err)
	}
	if f, err := d.OpenFile("planted", "planted", unix.O_WRONLY); !errors.Is(err, unix.ELOOP) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenFile of a symlink: %v; want ELOOP", err)
	}
	if err := d.Replace("state", "planted", []byte("new"), 0o644, true); err != nil {
		t.Fatalf("Replace: %v", err) // the planted temporary is removed, not followed
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the symlink's target holds %q", b)
	}
	if b, err := d.ReadOwn("state"); err != nil || string(b) != "new" {
		t.Errorf("ReadOwn: %q, %v", b, err)
	}
	os.Chmod(filepath.Join(base, "state"), 0o666)
	var owner *OwnerError
	if _, err := d.ReadOwn("state"); !errors.As(err, &owner) {
		t.Errorf("ReadOwn of a file others may write: %v; want an OwnerError", err)
	}
}

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// TestReplaceLeavesOthersTemporary: a temporary another user made under
// the name Replace writes first is in the way: the write fails and the
// file stays as it was (removing it is not ours to do).
func TestReplaceLeavesOthersTemporary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file of another user's")
	}
	base := t.TempDir()
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tmp := filepath.Join(base, "state.tmp")
	os.WriteFile(tmp, []byte("theirs"), 0o666)
	os.Chown(tmp, 65534, 65534)
	if err := d.Replace("state", "state.tmp", []byte("new"), 0o600, true); !contains(err, "is in the way") {
		t.Fatalf("Replace over another user's temporary: %v; want 'is in the way'", err)
	}
	if b, _ := os.ReadFile(tmp); string(b) != "theirs" {
		t.Errorf("the other user's file holds %q", b)
	}
}
