package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// What the importer says (its log, the termination message, the
// progress endpoint) when the world is hostile: no credential of a
// presigned URL or a header in either, a message the kubelet keeps
// whole, an endpoint whose port is taken.

// failedImport wants a non-zero exit and a message that does not claim
// the import completed.
func failedImport(t *testing.T, r *importerRun, limit time.Duration) string {
	t.Helper()
	code := r.wait(t, limit)
	msg := r.termination(t)
	if code == 0 || strings.Contains(msg, "Import Complete") || msg == "" {
		t.Fatalf("exit %d, termination message %q: a failed import", code, msg)
	}
	return msg
}

// TestCDIImportPresignedNotSaid: an http source at a presigned URL
// (S3's, GCS's, a token parameter) is CDI's common way to import from a
// private bucket: its signature is a credential. Neither the log (at
// klog's -v=1 and -v=9) nor the termination message says it, for an
// import that completes, one whose image is missing, a qcow2 refused for
// its backing file, and an endpoint refused for its scheme.
func TestCDIImportPresignedNotSaid(t *testing.T) {
	webtest.Need(t, "qemu-img", "qemu-utils")
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 1<<20+511, 31)
	qemuImg(t, "create", "-f", "qcow2", filepath.Join(dir, "base.qcow2"), "1M")
	qemuImg(t, "create", "-f", "qcow2", "-b", "base.qcow2", "-F", "qcow2", filepath.Join(dir, "top.qcow2"))
	s := webtest.Nginx(t, dir, webtest.Config{Bearer: "b3arer-t0ken-S3CRET"})
	const sig = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAS3CRETCRED%2F20261202%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=deadbeefS3CRETSIG&token=tok-S3CRET"
	bearer := "IMPORTER_EXTRA_HEADER_0=Authorization: Bearer b3arer-t0ken-S3CRET"
	data := fsVolume(t, 32<<20)
	for _, c := range []struct {
		name, url string
		ok        bool
		v         string
	}{
		{"completes", s.URL + "/disk.raw?" + sig, true, "-v=1"},
		{"completes at -v=9", s.URL + "/disk.raw?" + sig, true, "-v=9"},
		{"missing", s.URL + "/missing.raw?" + sig, false, "-v=9"},
		{"backing file", s.URL + "/top.qcow2?" + sig, false, "-v=1"},
		{"not http", "ftp://host/disk.raw?" + sig, false, "-v=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(data, "disk.img"))
			pod := podtest.New(t)
			pod.Data = data
			r := startImporter(t, pod, cdiEnv("http", c.url, bearer), c.v)
			if c.ok {
				r.completed(t)
			} else {
				failedImport(t, r, time.Minute)
			}
			for _, said := range []string{r.out.String(), r.termination(t)} {
				if strings.Contains(said, "S3CRET") {
					t.Fatalf("a credential is said:\n%s", said)
				}
			}
		})
	}
}

// TestCDIImportLongURLMessage: an image at a URL longer than the
// kubelet's 4096 bytes: the checksum mismatch (JSON after exit 0) is
// still whole JSON that says it, and a failure's text still fits.
func TestCDIImportLongURLMessage(t *testing.T) {
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 1<<20, 32)
	s := webtest.Nginx(t, dir, webtest.Config{})
	long := s.URL + "/disk.raw?pad=" + strings.Repeat("a%22%0A\\\"", 700)
	data := fsVolume(t, 32<<20)
	pod := podtest.New(t)
	pod.Data = data
	r := startImporter(t, pod, cdiEnv("http", long, "IMPORTER_CHECKSUM=md5:"+strings.Repeat("0", 32)))
	if code := r.wait(t, time.Minute); code != 0 {
		t.Fatalf("exit %d on a checksum mismatch", code)
	}
	text := r.termination(t)
	var m cdiMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil || len(text) > cdi.MaxTermination ||
		m.Message == nil || !strings.Contains(*m.Message, "checksum mismatch") {
		t.Fatalf("%d bytes, %v: %q", len(text), err, text)
	}
	pod = podtest.New(t)
	pod.Data = data
	r = startImporter(t, pod, cdiEnv("http", strings.Replace(long, "disk.raw", "missing.raw", 1)))
	if msg := failedImport(t, r, time.Minute); len(msg) > cdi.MaxTermination {
		t.Fatalf("a failure's message of %d bytes", len(msg))
	}
}
