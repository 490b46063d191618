package deploy

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/cmdtest"
)

// TestImage builds ringcp's image with podman and runs it: --version,
// then a copy onto a loop device passed with --device, as CDI runs its
// importer (UID 107, every capability dropped, no privilege escalation,
// a read-only root, no network).
func TestImage(t *testing.T) {
	p := newPodman(t)
	tag := buildImage(t, p, cmdtest.Binary(t))

	// The image: the entrypoint CDI runs, UID 107, and two files.
	got := p.must("image", "inspect", "--format", "{{.Config.User}} {{.Config.Entrypoint}}", tag)
	if strings.TrimSpace(got) != "107:107 [/ringcp cdi-importer]" {
		t.Errorf("user and entrypoint: %q", got)
	}
	root := strings.TrimSpace(p.must("image", "mount", tag))
	var files []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(path, root))
		}
		return err
	})
	p.must("image", "unmount", tag)
	sort.Strings(files)
	if strings.Join(files, " ") != "/etc/ssl/certs/ca-certificates.crt /ringcp" {
		t.Errorf("the image holds %q", files)
	}

	run := append([]string{"run", "--rm", "--network", "none", "--read-only", "--cap-drop", "all",
		"--security-opt", "no-new-privileges", "--entrypoint", "/ringcp"}, limits(t)...)
	if out := p.must(append(run, tag, "--version")...); !strings.HasPrefix(out, "ringcp ") {
		t.Errorf("--version says %q", out)
	}

	// A copy onto a block volume: 1 MiB + 4097 bytes of data after a
	// 1 MiB hole, onto a loop device whose other bytes must stay.
	dev, _ := blocktest.Device(t, 8<<20)
	fill := bytes.Repeat([]byte{0xAA}, 8<<20)
	writeDevice(t, dev, fill)
	// UID 107 owns the node, as a runtime with
	// device_ownership_from_security_context makes a volumeDevice.
	if err := os.Chown(dev, 107, 107); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chown(dev, 0, 0) })
	want := make([]byte, 2<<20+4097)
	for i := 1 << 20; i < len(want); i++ {
		want[i] = byte(i*13 + i>>11)
	}
	src := filepath.Join(t.TempDir(), "disk.raw")
	writeSparse(t, src, want, 1<<20)
	out := p.must(append(run, "--user", "107:107", "--device", dev+":/dev/cdi-block-volume",
		// Podman masks /sys/dev/block; ringcp's in-use check then fails
		// closed ("sysfs entry of block device: no such file").
		"--security-opt", "unmask=/sys/dev/block",
		"-v", src+":/disk.raw:ro", tag, "-v", "/disk.raw", "/dev/cdi-block-volume")...)
	t.Logf("ringcp in the container:\n%s", out)
	gotDev := readDevice(t, dev)
	if !bytes.Equal(gotDev[:len(want)], want) {
		t.Error("the device does not hold the image")
	}
	if !bytes.Equal(gotDev[len(want):], fill[len(want):]) {
		t.Error("the device changed past the image")
	}
}

func writeSparse(t *testing.T, path string, data []byte, hole int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data[hole:], int64(hole)); err != nil {
		t.Fatal(err)
	}
	// The temp dirs are 0700: the container's UID 107 reads through them.
	for dir := filepath.Dir(path); dir != os.TempDir() && dir != "/"; dir = filepath.Dir(dir) {
		os.Chmod(dir, 0o755)
	}
}

func writeDevice(t *testing.T, dev string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func readDevice(t *testing.T, dev string) []byte {
	t.Helper()
	raw, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
