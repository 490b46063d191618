package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestCDIImportChecksumOfImages: IMPORTER_CHECKSUM is of the bytes the
// server serves, as CDI's HTTP source hashes them under its decoders: an
// xz image's own digest completes the import (the volume holds the
// disk). A qcow2 image is read at its clusters' offsets, never whole, so
// its digest cannot be checked: refused, saying so, before anything is
// written (not as a server without ranges). A mismatch on a block volume
// is CDI's (exit 0, JSON whose message says "checksum mismatch", never
// "Import Complete").
func TestCDIImportChecksumOfImages(t *testing.T) {
	webtest.Need(t, "xz", "xz-utils")
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	disk := diskImage(t, raw, 4<<20+4096, 26)
	guestImage(t, dir, "disk.qcow2", "qcow2", 4<<20+4096, 26)
	if out, err := exec.Command("xz", "-T2", "-k", raw).CombinedOutput(); err != nil {
		t.Fatalf("xz: %v: %s", err, out)
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	sum := func(name, algo string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if algo == "md5" {
			return fmt.Sprintf("md5:%x", md5.Sum(b))
		}
		return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
	}
	for _, c := range []struct {
		name, algo string
		want       []byte
	}{{"disk.raw.xz", "sha256", disk}, {"disk.raw", "md5", disk}} {
		t.Run(c.name, func(t *testing.T) {
			data := fsVolume(t, 32<<20)
			pod := podtest.New(t)
			pod.Data = data
			r := startImporter(t, pod, cdiEnv("http", s.URL+"/"+c.name, "IMPORTER_CHECKSUM="+sum(c.name, c.algo)))
			r.completed(t)
			if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, c.want) {
				t.Fatalf("disk.img is not the disk (first difference at %d)", firstDiff(got, c.want))
			}
		})
	}
	t.Run("disk.qcow2", func(t *testing.T) {
		dev, fill := filled(t, 8<<20)
		pod := podtest.New(t)
		pod.Block = dev
		r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.qcow2", "IMPORTER_CHECKSUM="+sum("disk.qcow2", "sha256")))
		if code := r.wait(t, time.Minute); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		if msg := r.termination(t); !strings.Contains(msg, "does not serve IMPORTER_CHECKSUM") || strings.Contains(msg, "range") {
			t.Errorf("termination message %q", msg)
		}
		deviceHolds(t, dev, nil, fill)
	})
	t.Run("mismatch on a block volume", func(t *testing.T) {
		dev, _ := filled(t, 8<<20)
		pod := podtest.New(t)
		pod.Block = dev
		r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw", "IMPORTER_CHECKSUM=sha256:"+strings.Repeat("ab", 32)))
		if code := r.wait(t, time.Minute); code != 0 {
			t.Fatalf("exit %d: CDI exits 0 on a checksum mismatch", code)
		}
		var m cdiMessage
		text := r.termination(t)
		if err := json.Unmarshal([]byte(text), &m); err != nil || m.Message == nil ||
			!strings.Contains(*m.Message, "checksum mismatch") || strings.Contains(text, "Import Complete") {
			t.Fatalf("termination message %q (%v)", text, err)
		}
	})
}
