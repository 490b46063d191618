package qcow2

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Formats a hostile image may make the reader guess.

// fakeRaw is a raw disk whose first bytes are a qcow2 header naming
// backing (raw), as a guest can write it into its disk.
func fakeRaw(t *testing.T, dir, backing string) string {
	hdr := filepath.Join(dir, "hdr.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-u", "-b", backing, "-F", "raw", hdr, "1M")
	h, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	disk := make([]byte, 2<<20)
	rand.New(rand.NewSource(3)).Read(disk)
	copy(disk, h)
	path := filepath.Join(dir, "fake.raw")
	if err := os.WriteFile(path, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// forgetBackingFormat turns img's backing format extension into one no
// reader knows: the backing file's format is then probed.
func forgetBackingFormat(t *testing.T, img string) {
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	var ext [4]byte
	binary.BigEndian.PutUint32(ext[:], extBackingFormat)
	i := bytes.Index(b[:4096], ext[:])
	if i < 0 {
		t.Fatal("no backing format extension")
	}
	binary.BigEndian.PutUint32(b[i:], 0x7777aaaa)
	if err := os.WriteFile(img, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestProbedBackingNamesRefused: a backing file whose format the image
// does not record is probed; probed qcow2 and naming a file of its own,
// it is refused (a raw base disk whose guest wrote a qcow2 header), by
// Open and by Inspect, and the file it names is never opened. Recorded,
// or naming nothing, it is read.
func TestProbedBackingNamesRefused(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, bytes.Repeat([]byte("host secret\n"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := fakeRaw(t, dir, secret)
	top := filepath.Join(dir, "top.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", filepath.Base(fake), "-F", "raw", top, "2M")
	// Recorded raw: the fake header is the base's data.
	im := openPath(t, top, Options{})
	checkRead(t, im, rawOf(t, top))
	forgetBackingFormat(t, top)
	f, err := os.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if im, err := Open(f, Options{Opener: FileOpener}); !isCause(err, ErrBackingRefused) || !strings.Contains(err.Error(), "guessed") {
		if err == nil {
			im.Close()
		}
		t.Fatalf("probed backing file naming %s: %v; want ErrBackingRefused", secret, err)
	}
	info, err := Inspect(f, InspectOptions{Options: Options{Opener: FileOpener}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Backing == nil || info.Backing.Backing != nil || !isCause(info.Backing.BackingError, ErrBackingRefused) {
		t.Fatalf("Inspect followed the probed backing file's name: %+v", info.Backing)
	}
	// A probed qcow2 that names nothing is read (as libvirt allows).
	plain := filepath.Join(dir, "plain.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", plain, "2M")
	qemuIO(t, "qcow2", plain, "write -P 7 0 64k")
	qemuImg(t, "rebase", "-u", "-f", "qcow2", "-b", "plain.qcow2", "-F", "qcow2", top)
	forgetBackingFormat(t, top)
	im = openPath(t, top, Options{})
	p := make([]byte, 64<<10)
	if _, err := im.ReadAt(p, 0); err != nil || !bytes.Equal(p, bytes.Repeat([]byte{7}, len(p))) {
		t.Fatalf("probed plain backing file: %v", err)
	}
}

// TestGuessedTopRefused: Options.Guessed refuses an image that names a
// backing or data file, and only such an image.
func TestGuessedTopRefused(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	fake := fakeRaw(t, dir, "/etc/passwd")
	f, err := os.Open(fake)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := Open(f, Options{Opener: FileOpener, Guessed: true}); !isCause(err, ErrBackingRefused) {
		t.Fatalf("guessed image naming /etc/passwd: %v; want ErrBackingRefused", err)
	}
	data := filepath.Join(dir, "data.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-o", "data_file="+filepath.Join(dir, "data.raw"), data, "1M")
	g, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := Open(g, Options{Opener: FileOpener, Guessed: true}); !isCause(err, ErrBackingRefused) {
		t.Fatalf("guessed image naming a data file: %v; want ErrBackingRefused", err)
	}
	plain := filepath.Join(dir, "plain.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", plain, "1M")
	openPath(t, plain, Options{Guessed: true})
}
