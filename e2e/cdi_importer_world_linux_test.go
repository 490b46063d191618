package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// The importer against a broken or hostile server (the adversary pass
// of issue 26): whatever the server does, the volume holds the image
// and the message says "Import Complete", or the message says it failed;
// never a wrong disk called complete, never a hang after a stop.

// TestCDIImportObjectReplaced: the object is replaced by another of the
// same size while it is imported (a new ETag, or only a new
// Last-Modified). The import fails, or, if it completes, the volume is
// one version whole: never bytes of two.
func TestCDIImportObjectReplaced(t *testing.T) {
	dir := t.TempDir()
	v1 := diskImage(t, filepath.Join(dir, "v1.raw"), 6<<20, 22)
	v2 := diskImage(t, filepath.Join(dir, "v2.raw"), 6<<20, 23)
	for _, c := range []struct {
		name     string
		validate func(*faultServer)
	}{
		{"etag", func(s *faultServer) { s.nextETag = `"v2"` }},
		{"last-modified", func(s *faultServer) {
			s.etag, s.modified, s.nextModified = "", time.Unix(1700000000, 0), time.Unix(1700000100, 0)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFaultServer(t, v1)
			s.next, s.replaceAfter = v2, 6
			c.validate(s)
			dev, fill := filled(t, 8<<20)
			pod := podtest.New(t)
			pod.Block = dev
			r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"), "--max-rate", "4M", "--block-size", "256k", "--http-connections", "1")
			if code := r.wait(t, time.Minute); code == 0 {
				got, _ := os.ReadFile(dev)
				if !bytes.Equal(got[:len(v1)], v1) && !bytes.Equal(got[:len(v2)], v2) {
					t.Fatalf("exit 0 (%s) with a volume of two versions", r.termination(t))
				}
				if !bytes.Equal(got[len(v1):], fill[len(v1):]) {
					t.Fatal("the volume changed past the image")
				}
				return
			}
			if msg := r.termination(t); strings.Contains(msg, "Import Complete") {
				t.Fatalf("failed with %q", msg)
			}
		})
	}
}

// TestCDIImportBodiesCutShort: every body cut short (the connection
// dropped mid-range): a few KiB each time fails the import after the
// retries, never completes it; 256 KiB each time is progress, and the
// import completes with the image.
func TestCDIImportBodiesCutShort(t *testing.T) {
	want := diskImage(t, filepath.Join(t.TempDir(), "disk.raw"), 2<<20+511, 24)
	t.Run("progress", func(t *testing.T) {
		s := newFaultServer(t, want)
		s.cutAfter, s.cutFrom = 256<<10, 64<<10
		data := fsVolume(t, 32<<20)
		pod := podtest.New(t)
		pod.Data = data
		startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw")).completed(t)
		if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
			t.Fatalf("disk.img is not the image (first difference at %d)", firstDiff(got, want))
		}
	})
	t.Run("none", func(t *testing.T) {
		s := newFaultServer(t, want)
		s.cutAfter, s.cutFrom = 100, 64<<10
		dev, fill := filled(t, 4<<20)
		pod := podtest.New(t)
		pod.Block = dev
		r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"))
		failedImport(t, r, 3*time.Minute)
		got, _ := os.ReadFile(dev)
		if !bytes.Equal(got[len(want):], fill[len(want):]) {
			t.Fatal("the volume changed past the image")
		}
	})
}

// TestCDIImportStallStop: a server that stalls mid-body, while the
// image's first bytes are sniffed or while it is copied: SIGTERM (the
// pod deleted) ends the importer within seconds, 143, never complete.
func TestCDIImportStallStop(t *testing.T) {
	want := diskImage(t, filepath.Join(t.TempDir(), "disk.raw"), 3<<20, 25)
	for _, c := range []struct {
		name string
		from int64
	}{{"sniff", 0}, {"copy", 1 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			s := newFaultServer(t, want)
			s.stallFrom = c.from
			dev, _ := filled(t, 4<<20)
			pod := podtest.New(t)
			pod.Block = dev
			r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"))
			time.Sleep(2 * time.Second)
			select {
			case <-r.exited:
				t.Fatalf("exited before the stop:\n%s", r.out.String())
			default:
			}
			r.cmd.Process.Signal(syscall.SIGTERM)
			if code := r.wait(t, stopLimit); code != 128+int(syscall.SIGTERM) {
				t.Fatalf("exit %d after SIGTERM", code)
			}
			if msg := r.termination(t); msg == "" || strings.Contains(msg, "Import Complete") {
				t.Fatalf("termination message after SIGTERM: %q", msg)
			}
		})
	}
}

// TestCDIImportPreallocated: PREALLOCATION=true on a qcow2 import: on a
// filesystem volume every byte of disk.img allocated, on a block volume
// the image's holes written as zeros (the rest of the device kept), and
// CDI's preallocationApplied said; the bytes are the guest's either way.
func TestCDIImportPreallocated(t *testing.T) {
	dir := t.TempDir()
	want := guestImage(t, dir, "disk.qcow2", "qcow2", 8<<20, 27)
	s := webtest.Nginx(t, dir, webtest.Config{})
	env := cdiEnv("http", s.URL+"/disk.qcow2", "PREALLOCATION=true")
	t.Run("filesystem", func(t *testing.T) {
		data := fsVolume(t, 32<<20)
		pod := podtest.New(t)
		pod.Data = data
		r := startImporter(t, pod, env)
		if m := r.completed(t); m.PreallocationApplied == nil || !*m.PreallocationApplied {
			t.Errorf("termination message: %s", r.termination(t))
		}
		img := filepath.Join(data, "disk.img")
		if got, _ := os.ReadFile(img); !bytes.Equal(got, want) {
			t.Fatalf("disk.img is not the guest's bytes (first difference at %d)", firstDiff(got, want))
		}
		if alloc := allocated(t, img); alloc < int64(len(want)) {
			t.Errorf("disk.img takes %d bytes of %d: not preallocated", alloc, len(want))
		}
	})
	t.Run("block", func(t *testing.T) {
		dev, fill := filled(t, 12<<20)
		pod := podtest.New(t)
		pod.Block = dev
		r := startImporter(t, pod, env)
		if m := r.completed(t); m.PreallocationApplied == nil || !*m.PreallocationApplied {
			t.Errorf("termination message: %s", r.termination(t))
		}
		deviceHolds(t, dev, want, fill[len(want):])
	})
}

// TestCDIImportCertDir: IMPORTER_CERT_DIR as a ConfigMap volume holds it
// (..data, a key linking into it) beside a file that holds no
// certificate: CDI warns about that one and trusts the others; so does
// ringcp, and an https import completes. Without the CA it is refused.
func TestCDIImportCertDir(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 1<<20+4097, 28)
	s := webtest.Nginx(t, dir, webtest.Config{TLS: true})
	certs := t.TempDir()
	ca, err := os.ReadFile(s.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(certs, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"..data/ca.crt": ca, "..data/junk.pem": []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"),
	} {
		if err := os.WriteFile(filepath.Join(certs, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ca.crt", "junk.pem"} {
		if err := os.Symlink("..data/"+name, filepath.Join(certs, name)); err != nil {
			t.Fatal(err)
		}
	}
	data := fsVolume(t, 32<<20)
	pod := podtest.New(t)
	pod.Data = data
	startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", "IMPORTER_CERT_DIR="+certs)).completed(t)
	if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
		t.Fatal("disk.img is not the image")
	}
	os.Remove(filepath.Join(certs, "ca.crt"))
	pod = podtest.New(t)
	pod.Data = data
	failedImport(t, startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", "IMPORTER_CERT_DIR="+certs)), time.Minute)
}
