package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
	"golang.org/x/sys/unix"
)

// The volume against the image: too small for it (refused before a
// byte is written, in the words CDI's controller turns into "DataVolume
// too small to contain image"), not what it should be (a block device
// path that is a file, a character device, a link), planted names where
// the import's files go.

// TestCDIImportVolumeTooSmall: an image larger than the volume, or than
// IMPORTER_IMAGE_SIZE on a filesystem volume, is refused before
// anything is written; a gzip image, whose size is known only at its
// end, fails there (exit 1: the volume was written) in the same words.
func TestCDIImportVolumeTooSmall(t *testing.T) {
	webtest.Need(t, "gzip", "gzip")
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 24<<20, 51)
	guestImage(t, dir, "disk.qcow2", "qcow2", 6<<20, 51)
	if out, err := exec.Command("gzip", "-k", "-1", filepath.Join(dir, "disk.raw")).CombinedOutput(); err != nil {
		t.Fatalf("gzip: %v: %s", err, out)
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	for _, c := range []struct {
		name, path string
		block      bool
		over       []string
		says       string
		code       int
	}{
		{"raw onto a smaller block volume", "/disk.raw", true, nil, "larger than the reported available storage", 2},
		{"qcow2 onto a smaller block volume", "/disk.qcow2", true, nil, "larger than the reported available storage", 2},
		{"raw onto a smaller filesystem", "/disk.raw", false, nil, "larger than the reported available storage", 2},
		{"qcow2 larger than IMPORTER_IMAGE_SIZE", "/disk.qcow2", false, []string{"IMPORTER_IMAGE_SIZE=4Mi"}, "larger than the reported available storage", 2},
		{"gzip onto a smaller filesystem", "/disk.raw.gz", false, nil, "larger than the reported available storage", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := podtest.New(t)
			var dev string
			var fill []byte
			if c.block {
				dev, fill = filled(t, 4<<20)
				pod.Block = dev
			} else {
				pod.Data = fsVolume(t, 16<<20)
			}
			r := startImporter(t, pod, cdiEnv("http", s.URL+c.path, c.over...))
			if code := r.wait(t, time.Minute); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if msg := r.termination(t); !strings.Contains(msg, c.says) || strings.Contains(msg, "Import Complete") {
				t.Errorf("termination message %q does not say %q", msg, c.says)
			}
			if c.block {
				deviceHolds(t, dev, nil, fill)
			} else if c.code == 2 {
				mustNotExist(t, filepath.Join(pod.Data, "disk.img"))
			}
		})
	}
}

// TestCDIImportBlockPathNotADevice: the block volume's path is a
// regular file, a character device, a directory or a link to a file:
// refused, nothing written there nor on the filesystem volume.
func TestCDIImportBlockPathNotADevice(t *testing.T) {
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 1<<20, 52)
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 32<<20)
	keep := []byte("not a volume\n")
	for _, c := range []struct {
		name string
		make func(path, victim string) error
	}{
		{"regular file", func(path, _ string) error { return os.WriteFile(path, keep, 0o644) }},
		{"character device", func(path, _ string) error { return unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) }},
		{"directory", func(path, _ string) error { return os.Mkdir(path, 0o755) }},
		{"link to a file", func(path, victim string) error { return os.Symlink(victim, path) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			path, victim, log := filepath.Join(tmp, "cdi-block-volume"), filepath.Join(tmp, "victim"), filepath.Join(tmp, "termination-log")
			if err := os.WriteFile(victim, keep, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.make(path, victim); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary(t), "cdi-importer", "--block-device", path, "--data-dir", data,
				"--termination-log", log, "--metrics-addr", "127.0.0.1:0", "--scratch-dir", tmp)
			cmd.Env = cdiEnv("http", s.URL+"/disk.raw")
			out, err := cmd.CombinedOutput()
			if code := exitCodeOf(err); code != 2 {
				t.Errorf("exit %d, want 2\n%s", code, out)
			}
			if msg, _ := os.ReadFile(log); !strings.Contains(string(msg), "not a block device") {
				t.Errorf("termination message %q", msg)
			}
			if got, _ := os.ReadFile(victim); !bytes.Equal(got, keep) {
				t.Error("the file was written")
			}
			mustNotExist(t, filepath.Join(data, "disk.img"))
		})
	}
}

// TestCDIImportPlantedState: the resume state's name planted by an
// earlier tenant of the volume (a link out of it, a hard link to another
// file, a FIFO) and a FIFO at disk.img: none is written through, none
// blocks the import.
func TestCDIImportPlantedState(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 2<<20+4097, 53)
	s := webtest.Nginx(t, dir, webtest.Config{})
	keep := []byte(`{"Done": 999999999}` + "\n")
	for _, c := range []struct {
		name string
		make func(data, victim string) error
	}{
		{"state links out", func(data, victim string) error {
			return os.Symlink(victim, filepath.Join(data, "disk.img.ringcp-state"))
		}},
		{"state hard link", func(data, _ string) error {
			if err := os.WriteFile(filepath.Join(data, "other"), keep, 0o644); err != nil {
				return err
			}
			return os.Link(filepath.Join(data, "other"), filepath.Join(data, "disk.img.ringcp-state"))
		}},
		{"state fifo", func(data, _ string) error { return unix.Mkfifo(filepath.Join(data, "disk.img.ringcp-state"), 0o666) }},
		{"image fifo", func(data, _ string) error { return unix.Mkfifo(filepath.Join(data, "disk.img"), 0o666) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := fsVolume(t, 32<<20)
			scratch := t.TempDir()
			victim := filepath.Join(scratch, "victim")
			if err := os.WriteFile(victim, keep, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.make(data, "/scratch/victim"); err != nil {
				t.Fatal(err)
			}
			pod := podtest.New(t)
			pod.Data, pod.Scratch = data, scratch
			r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"))
			r.completed(t)
			for _, f := range []string{victim, filepath.Join(data, "other")} {
				if got, err := os.ReadFile(f); err == nil && !bytes.Equal(got, keep) {
					t.Fatalf("the import wrote %s", f)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
				t.Fatal("disk.img is not the image")
			}
		})
	}
}
