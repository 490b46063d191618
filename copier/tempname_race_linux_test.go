package copier

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/safedir"
	"golang.org/x/sys/unix"
)

// TestTempNameTakenOverBetweenCreateAndLock: two ringcps start a copy to
// the same new DST (temporary-name method). createTemp creates the name
// with O_EXCL, then locks it: two steps. When the second copy looks in
// between, the first one's file is unlocked, so removeLeftover takes it
// for a killed run's leftover, removes it, and creates its own under the
// same name. The first copy goes on writing its unlinked file, and at the
// end renames the name, which now holds the second copy's unfinished
// file, over DST: it reports complete, and DST holds the other copy's
// data. The interleaving is played here step by step with the functions
// Run uses; the two copies have different sources.
func TestTempNameTakenOverBetweenCreateAndLock(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	tmp := tempName(dst)
	folder, err := safedir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()

	// Copy 1: createTemp's O_EXCL create has returned, the flock not yet.
	f1, err := openAs(tmp, dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	// Copy 2 starts now and finds the name taken by an unlocked file.
	f2, err := createTemp(folder, tmp, dst, os.O_WRONLY)
	if err != nil {
		t.Fatalf("copy 2: %v", err)
	}
	defer f2.Close()
	// Copy 1 takes its lock (its file is no longer named, so it gets it).
	if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("copy 1's flock: %v", err)
	}
	mine := bytes.Repeat([]byte("copy one "), 1000)
	if _, err := f1.Write(mine); err != nil {
		t.Fatal(err)
	}
	if _, err := f2.Write([]byte("copy two, not finished")); err != nil {
		t.Fatal(err)
	}
	// Copy 1 completes and publishes.
	d1 := &dest{f: f1, creation: newTemp, tmp: tmp, dir: folder}
	err = d1.name(dst)
	got, _ := os.ReadFile(dst)
	if err == nil && !bytes.Equal(got, mine) {
		t.Fatalf("copy 1 named DST without error, but DST holds %q...: copy 2's unfinished file", got[:min(len(got), 22)])
	}
}

// TestTempNamePlanted: whatever another user planted under the hidden
// temporary name of a new DST, a symlink to a file of the victim's or a
// hard link, is never opened for writing: the create fails with EEXIST
// (O_EXCL|O_NOFOLLOW), the leftover check refuses a symlink, and the
// file it points at keeps its bytes.
func TestTempNamePlanted(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	tmp := tempName(dst)
	folder, err := safedir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	if err := os.Symlink(victim, tmp); err != nil {
		t.Fatal(err)
	}
	if f, err := createTemp(folder, tmp, dst, os.O_WRONLY); err == nil {
		f.Write([]byte("overwritten"))
		f.Close()
		t.Error("createTemp opened a planted symlink")
	} else if !strings.Contains(err.Error(), "in the way") {
		t.Errorf("createTemp: %v; want it refused as in the way", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the victim's file holds %q", b)
	}
}
