package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// What an adversary would try on `ringcp cdi-importer`: a volume whose
// earlier tenant planted links where the image goes, a checksum that does
// not match, credentials that must not be said, a stop that must not
// hang nor claim success.

// TestCDIImportPlantedLinks: /data/disk.img a symbolic link to a file
// outside the volume, and a hard link to a file inside it: the import
// writes neither, and disk.img is the image.
func TestCDIImportPlantedLinks(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 2<<20+511, 6)
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 32<<20)
	scratch := t.TempDir()
	victim := filepath.Join(scratch, "victim")
	keep := []byte("another file, not the image\n")
	for _, plant := range []struct {
		name string
		make func() error
		file string // the file that must keep its bytes
	}{
		{"symlink out of the volume", func() error { return os.Symlink("/scratch/victim", filepath.Join(data, "disk.img")) }, victim},
		{"hard link in the volume", func() error {
			return os.Link(filepath.Join(data, "other"), filepath.Join(data, "disk.img"))
		}, filepath.Join(data, "other")},
		{"symlink as the partial file", func() error {
			return os.Symlink("/scratch/victim", filepath.Join(data, "disk.img.ringcp-partial"))
		}, victim},
	} {
		t.Run(plant.name, func(t *testing.T) {
			os.Remove(filepath.Join(data, "disk.img"))
			os.Remove(filepath.Join(data, "disk.img.ringcp-partial"))
			for _, f := range []string{victim, filepath.Join(data, "other")} {
				if err := os.WriteFile(f, keep, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := plant.make(); err != nil {
				t.Fatal(err)
			}
			pod := podtest.New(t)
			pod.Data, pod.Scratch = data, scratch
			startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw")).completed(t)
			if got, _ := os.ReadFile(plant.file); !bytes.Equal(got, keep) {
				t.Fatalf("the import wrote %s", plant.file)
			}
			if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
				t.Fatal("disk.img is not the image")
			}
		})
	}
}

// TestCDIImportChecksum: IMPORTER_CHECKSUM that matches completes; one
// that does not exits 0 with CDI's "checksum mismatch" (its controller
// fails the import for good), never "Import Complete", and leaves no
// disk.img.
func TestCDIImportChecksum(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 3<<20+4097, 7)
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 32<<20)
	sum := sha256.Sum256(want)
	pod := podtest.New(t)
	pod.Data = data
	startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", fmt.Sprintf("IMPORTER_CHECKSUM=sha256:%x", sum))).completed(t)
	os.Remove(filepath.Join(data, "disk.img"))
	pod = podtest.New(t)
	pod.Data = data
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", "IMPORTER_CHECKSUM=sha256:"+strings.Repeat("0", 64)))
	if code := r.wait(t, time.Minute); code != 0 {
		t.Fatalf("exit %d: CDI reads a mismatch from the message after exit 0", code)
	}
	if msg := r.termination(t); !strings.Contains(msg, "checksum mismatch") || strings.Contains(msg, "Import Complete") {
		t.Fatalf("termination message: %s", msg)
	}
	mustNotExist(t, filepath.Join(data, "disk.img"))
}

// TestCDIImportBasicAuthNotSaid: the Secret's keys as HTTP basic auth
// import; a failing import says neither the password in its log nor in
// its termination message.
func TestCDIImportBasicAuthNotSaid(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 1<<20+1, 8)
	const user, pass = "importer", "s3cr3t-pa55word"
	s := webtest.Nginx(t, dir, webtest.Config{BasicAuth: user + ":" + pass})
	data := fsVolume(t, 32<<20)
	keys := []string{"IMPORTER_ACCESS_KEY_ID=" + user, "IMPORTER_SECRET_KEY=" + pass}
	pod := podtest.New(t)
	pod.Data = data
	ok := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", keys...))
	ok.completed(t)
	if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
		t.Fatal("disk.img is not the image")
	}
	pod = podtest.New(t)
	pod.Data = data
	bad := startImporter(t, pod, cdiEnv("http", s.URL+"/missing.raw", keys...))
	if code := bad.wait(t, time.Minute); code == 0 {
		t.Fatal("a missing image imported")
	}
	for _, out := range []string{ok.out.String(), ok.termination(t), bad.out.String(), bad.termination(t)} {
		if strings.Contains(out, pass) {
			t.Fatalf("the password is said: %s", out)
		}
	}
}

// TestCDIImportStop: SIGTERM (the pod deleted) stops the import within
// seconds, exit 143, with a message that does not claim it completed.
func TestCDIImportStop(t *testing.T) {
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 16<<20, 9)
	s := webtest.Nginx(t, dir, webtest.Config{})
	dev, _ := filled(t, 16<<20)
	pod := podtest.New(t)
	pod.Block = dev
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"), "--max-rate", "1M")
	for len(r.scraped()) == 0 || r.scraped()[len(r.scraped())-1] == 0 {
		select {
		case <-r.exited:
			t.Fatalf("exited before any progress:\n%s", r.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t, 5*time.Second); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	if msg := r.termination(t); msg == "" || strings.Contains(msg, "Import Complete") {
		t.Fatalf("termination message after SIGTERM: %q", msg)
	}
}
