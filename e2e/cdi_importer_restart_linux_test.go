package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// A restart that resumes must never make a wrong disk: between the
// killed run and the next, the object is replaced, the endpoint names
// another image, the image changes size or becomes a compressed one. The
// restart imports what is there now, whole, and leaves nothing of the
// earlier run on the volume.

// killPartWay starts an import of url onto pod and kills it (signal)
// once its state (at state) records 4 MiB.
func killPartWay(t *testing.T, pod *podtest.Pod, url, state string, signal syscall.Signal) {
	t.Helper()
	r := startImporter(t, pod, cdiEnv("http", url), "--max-rate", "4M", "--sync-every", "200ms", "--block-size", "256k")
	deadline := time.Now().Add(time.Minute)
	for readState(t, state) < 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the state does not record 4 MiB:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.cmd.Process.Signal(signal)
	if code := r.wait(t, stopLimit); code != 128+int(signal) {
		t.Fatalf("exit %d after %v", code, signal)
	}
	// What the killed run left is for the volume's group alone.
	for _, f := range []string{state, filepath.Join(filepath.Dir(state), "disk.img.ringcp-partial")} {
		if st, err := os.Stat(f); err == nil && st.Mode().Perm()&0o007 != 0 {
			t.Errorf("%s has mode %v: other users reach it", f, st.Mode())
		}
	}
	if err := os.WriteFile(pod.TerminationLog, nil, 0o666); err != nil {
		t.Fatal(err)
	}
}

// TestCDIRestartAfterChange: on a filesystem volume, each change between
// a killed run and its restart; the restart's disk.img is the new image.
func TestCDIRestartAfterChange(t *testing.T) {
	webtest.Need(t, "xz", "xz-utils")
	for _, c := range []struct {
		name   string
		change func(t *testing.T, dir string, v2 []byte) string // the restart's URL path
	}{
		{"object replaced", func(t *testing.T, dir string, v2 []byte) string {
			replaceFile(t, filepath.Join(dir, "disk.raw"), v2, time.Now().Add(time.Hour))
			return "/disk.raw"
		}},
		{"object replaced, same size and mtime", func(t *testing.T, dir string, v2 []byte) string {
			st, err := os.Stat(filepath.Join(dir, "disk.raw"))
			if err != nil {
				t.Fatal(err)
			}
			replaceFile(t, filepath.Join(dir, "disk.raw"), v2, st.ModTime())
			return "/disk.raw"
		}},
		{"another endpoint", func(t *testing.T, dir string, v2 []byte) string {
			replaceFile(t, filepath.Join(dir, "other.raw"), v2, time.Now())
			return "/other.raw"
		}},
		{"smaller object", func(t *testing.T, dir string, v2 []byte) string {
			replaceFile(t, filepath.Join(dir, "disk.raw"), v2[:3<<20+511], time.Now().Add(time.Hour))
			return "/disk.raw"
		}},
		{"compressed now", func(t *testing.T, dir string, v2 []byte) string {
			name := filepath.Join(dir, "disk.raw")
			replaceFile(t, name, v2, time.Now())
			if out, err := exec.Command("xz", "-T2", "-f", name).CombinedOutput(); err != nil {
				t.Fatalf("xz: %v: %s", err, out)
			}
			return "/disk.raw.xz"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			diskImage(t, filepath.Join(dir, "disk.raw"), 16<<20, 41)
			v2 := diskImage(t, filepath.Join(t.TempDir(), "v2.raw"), 16<<20, 42)
			s := webtest.Nginx(t, dir, webtest.Config{})
			data := fsVolume(t, 64<<20)
			pod := podtest.New(t)
			pod.Data = data
			img := filepath.Join(data, "disk.img")
			killPartWay(t, pod, s.URL+"/disk.raw", img+".ringcp-state", syscall.SIGKILL)
			path := c.change(t, dir, v2)
			r := startImporter(t, pod, cdiEnv("http", s.URL+path))
			r.completed(t)
			want := v2
			if c.name == "smaller object" {
				want = v2[:3<<20+511]
			}
			if got, _ := os.ReadFile(img); !bytes.Equal(got, want) {
				t.Fatalf("disk.img is not the new image (%d bytes, first difference at %d)", len(got), firstDiff(got, want))
			}
			mustNotExist(t, img+".ringcp-state")
			mustNotExist(t, img+".ringcp-partial")
		})
	}
}

// TestCDIRestartBlockAfterStop: a block volume's import stopped by
// SIGTERM (the pod deleted; the controller starts another on the same
// volumes), the object replaced meanwhile, with a new mtime or keeping
// its size and mtime (a reproducible build's image: nginx's ETag is the
// same): the next run's volume is the new image, never the old one's
// start and the new one's rest.
func TestCDIRestartBlockAfterStop(t *testing.T) {
	for _, sameMtime := range []bool{false, true} {
		t.Run(map[bool]string{false: "new mtime", true: "same size and mtime"}[sameMtime], func(t *testing.T) {
			dir := t.TempDir()
			diskImage(t, filepath.Join(dir, "disk.raw"), 16<<20, 43)
			v2 := diskImage(t, filepath.Join(t.TempDir(), "v2.raw"), 16<<20, 44)
			s := webtest.Nginx(t, dir, webtest.Config{})
			dev, fill := filled(t, 24<<20)
			pod := podtest.New(t)
			pod.Block, pod.Scratch = dev, t.TempDir()
			st, err := os.Stat(filepath.Join(dir, "disk.raw"))
			if err != nil {
				t.Fatal(err)
			}
			killPartWay(t, pod, s.URL+"/disk.raw", filepath.Join(pod.Scratch, cdi.BlockStateName), syscall.SIGTERM)
			mtime := time.Now().Add(time.Hour)
			if sameMtime {
				mtime = st.ModTime()
			}
			replaceFile(t, filepath.Join(dir, "disk.raw"), v2, mtime)
			startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw")).completed(t)
			deviceHolds(t, dev, v2, fill[len(v2):])
		})
	}
}

// replaceFile writes data to path as a new file (the old one renamed
// over, as a web server's files are replaced) with mtime.
func replaceFile(t *testing.T, path string, data []byte, mtime time.Time) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestCDIRestartAsBlank: a filesystem volume whose import was killed is
// made a blank disk (the DataVolume recreated blank on the same claim):
// the earlier run's partial file and state, which take the volume's
// space, go; disk.img reads as zeros.
func TestCDIRestartAsBlank(t *testing.T) {
	dir := t.TempDir()
	diskImage(t, filepath.Join(dir, "disk.raw"), 16<<20, 45)
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 64<<20)
	pod := podtest.New(t)
	pod.Data = data
	img := filepath.Join(data, "disk.img")
	killPartWay(t, pod, s.URL+"/disk.raw", img+".ringcp-state", syscall.SIGKILL)
	startImporter(t, pod, blankEnv("8Mi")).completed(t)
	mustNotExist(t, img+".ringcp-state")
	mustNotExist(t, img+".ringcp-partial")
	if got, _ := os.ReadFile(img); len(got) == 0 || !bytes.Equal(got, make([]byte, len(got))) {
		t.Fatalf("disk.img of %d bytes is not zeros", len(got))
	}
}
