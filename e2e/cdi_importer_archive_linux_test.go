package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/treecmp"
	"github.com/ringcp/ringcp/internal/webtest"
)

// IMPORTER_CONTENTTYPE=archive: a tar (maybe compressed) over HTTP is
// extracted into the filesystem volume, as CDI's importer extracts it
// with GNU tar, and hostile archives never reach outside it.

// archiveTree makes a tree of awkward files: sizes 0 to 1 MiB + 3, modes,
// a read-only directory, a relative symbolic link, a hard link, a FIFO.
func archiveTree(t *testing.T, tree string) {
	t.Helper()
	for _, d := range []string{"d/e", "ro"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range []int{0, 1, 511, 4097, 1<<20 + 3} {
		b := bytes.Repeat([]byte{byte(i + 1), 0, 0, 9}, n/4+1)[:n]
		if err := os.WriteFile(filepath.Join(tree, "d", "e", "f"+string(rune('a'+i))), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(tree, "ro", "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink("d/e/fd", filepath.Join(tree, "link")))
	must(t, os.Link(filepath.Join(tree, "d", "e", "fc"), filepath.Join(tree, "hard")))
	must(t, syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o640))
	must(t, os.Chmod(filepath.Join(tree, "ro"), 0o555))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func shell(t *testing.T, script string) {
	t.Helper()
	if out, err := exec.Command("sh", "-ec", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// TestCDIImportArchive: a .tar and a .tar.gz made by GNU tar, over
// HTTP, extracted onto an ext4 volume: the volume then holds what GNU
// tar extracts (--preserve-permissions --no-same-owner, as CDI runs it),
// CDI's message, progress seen; with IMPORTER_CHECKSUM of the object it
// completes, with another it says "checksum mismatch" (exit 0, as CDI)
// and the volume is emptied.
func TestCDIImportArchive(t *testing.T) {
	webtest.Need(t, "tar", "tar")
	webtest.Need(t, "gzip", "gzip")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	archiveTree(t, tree)
	shell(t, "cd "+dir+" && tar -cf a.tar -C tree . && tar -czf a.tar.gz -C tree .")
	gnu := filepath.Join(dir, "gnu")
	must(t, os.Mkdir(gnu, 0o755))
	shell(t, "tar --preserve-permissions --no-same-owner -xf "+filepath.Join(dir, "a.tar")+" -C "+gnu)
	s := webtest.Nginx(t, dir, webtest.Config{})
	packed, err := os.ReadFile(filepath.Join(dir, "a.tar.gz"))
	must(t, err)
	sum := sha256.Sum256(packed)
	for _, c := range []struct {
		name, object, checksum string
		mismatch               bool
	}{
		{"tar", "a.tar", "", false},
		{"tar.gz with its checksum", "a.tar.gz", "sha256:" + hex.EncodeToString(sum[:]), false},
		{"tar.gz with another checksum", "a.tar.gz", "sha256:" + strings.Repeat("0", 64), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := fsVolume(t, 32<<20)
			must(t, os.Remove(filepath.Join(data, "lost+found")))
			pod := podtest.New(t)
			pod.Data = data
			env := cdiEnv("http", s.URL+"/"+c.object, "IMPORTER_CONTENTTYPE=archive", "IMPORTER_CHECKSUM="+c.checksum)
			r := startImporter(t, pod, env)
			if c.mismatch {
				if code := r.wait(t, time.Minute); code != 0 || !strings.Contains(r.termination(t), "checksum mismatch") {
					t.Fatalf("exit %d, termination message %q; want 0 and a checksum mismatch", code, r.termination(t))
				}
				if entries, _ := os.ReadDir(data); len(entries) != 0 {
					t.Errorf("the volume still holds %d entries after the mismatch", len(entries))
				}
				return
			}
			m := r.completed(t)
			treecmp.Compare(t, gnu, data)
			if m.Ringcp == nil || m.Ringcp.Bytes != 1<<20+3+4097+511+1+int64(len("#!/bin/sh\n")) {
				t.Errorf("termination message: %s", r.termination(t))
			}
			for i, v := range r.scraped() {
				if v > 100 || i > 0 && v < r.scraped()[i-1] {
					t.Fatalf("progress went %v", r.scraped())
				}
			}
		})
	}
}

// hostileTar is an archive of members written with archive/tar; a
// member with size set declares that many bytes and ends the archive
// after its data.
func hostileTar(t *testing.T, members ...tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range members {
		data := []byte("hostile")
		declared := h.Size
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(data))
		}
		h.Mode = 0o644
		must(t, tw.WriteHeader(&h))
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if declared > 0 {
			b.Write(data)
			return b.Bytes()
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	must(t, tw.Close())
	return b.Bytes()
}

// TestCDIImportArchiveRefusals: an archive onto a block volume, or as a
// blank disk, is refused (exit 2) in words that say why; hostile archives
// fail the import (exit 1, "unable to untar files from endpoint", the
// member named) and leave nothing outside the volume; a truncated one
// fails too.
func TestCDIImportArchiveRefusals(t *testing.T) {
	dir := t.TempDir()
	reg, sym, lnk := byte(tar.TypeReg), byte(tar.TypeSymlink), byte(tar.TypeLink)
	objects := map[string][]byte{
		"dotdot.tar":   hostileTar(t, tar.Header{Name: "../escape", Typeflag: reg}),
		"symlink.tar":  hostileTar(t, tar.Header{Name: "l", Linkname: "..", Typeflag: sym}, tar.Header{Name: "l/escape", Typeflag: reg}),
		"through.tar":  hostileTar(t, tar.Header{Name: "d/", Typeflag: tar.TypeDir}, tar.Header{Name: "l", Linkname: "d", Typeflag: sym}, tar.Header{Name: "l/f", Typeflag: reg}),
		"hardlink.tar": hostileTar(t, tar.Header{Name: "h", Linkname: "../../etc/passwd", Typeflag: lnk}),
		"huge.tar":     hostileTar(t, tar.Header{Name: "big", Typeflag: reg, Size: 1 << 40}),
		"device.tar":   hostileTar(t, tar.Header{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}),
	}
	good := hostileTar(t, tar.Header{Name: "a", Typeflag: reg}, tar.Header{Name: "b", Typeflag: reg})
	objects["truncated.tar"] = good[:512+100]
	for name, b := range objects {
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 32<<20)
	dev, _ := filled(t, 8<<20)
	for _, c := range []struct {
		name, object string
		block        bool
		source       string
		code         int
		says         string
	}{
		{"block volume", "dotdot.tar", true, "http", 2, "needs a filesystem volume"},
		{"blank", "", false, "none", 2, "Cannot create empty disk with content type archive"},
		{"dotdot", "dotdot.tar", false, "http", 1, `"../escape"`},
		{"symlink out then a file", "symlink.tar", false, "http", 1, "climbs outside"},
		{"a file through a symlink", "through.tar", false, "http", 1, "without following a link"},
		{"hard link out", "hardlink.tar", false, "http", 1, "outside the volume"},
		{"huge declared size", "huge.tar", false, "http", 1, `"big"`},
		{"device node", "device.tar", false, "http", 1, "device"},
		{"truncated", "truncated.tar", false, "http", 1, "cut short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := podtest.New(t)
			if c.block {
				pod.Block = dev
			} else {
				pod.Data = data
			}
			r := startImporter(t, pod, cdiEnv(c.source, s.URL+"/"+c.object, "IMPORTER_CONTENTTYPE=archive", "IMPORTER_IMAGE_SIZE=1Mi"))
			if code := r.wait(t, time.Minute); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			msg := r.termination(t)
			if !strings.Contains(msg, c.says) || strings.Contains(msg, "Import Complete") {
				t.Errorf("termination message %q does not say %q", msg, c.says)
			}
			if c.code == 1 && !strings.Contains(msg, "Unable to process data: unable to untar files from endpoint") {
				t.Errorf("termination message %q is not CDI's", msg)
			}
			for _, n := range []string{"escape", "etc"} {
				mustNotExist(t, filepath.Join(data, n))
			}
		})
	}
}

// TestCDIImportArchiveStop: SIGTERM while the archive's server stalls
// mid-body (no ranges, its one answer open) stops the extraction within
// seconds, exit 143, with a message that does not claim it completed.
func TestCDIImportArchiveStop(t *testing.T) {
	body := hostileTar(t, tar.Header{Name: "a", Typeflag: tar.TypeReg})
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+1<<20))
		w.Write(body[:1024])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	pod := podtest.New(t)
	pod.Data = fsVolume(t, 32<<20)
	r := startImporter(t, pod, cdiEnv("http", ts.URL+"/a.tar", "IMPORTER_CONTENTTYPE=archive"))
	for !strings.Contains(r.out.String(), "extracting the archive") {
		select {
		case <-r.exited:
			t.Fatalf("exited before it extracted:\n%s", r.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond) // the extraction waits for the body now
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t, stopLimit); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	if msg := r.termination(t); !strings.Contains(msg, "interrupted by SIGTERM") || strings.Contains(msg, "Import Complete") {
		t.Fatalf("termination message after SIGTERM: %q", msg)
	}
}
