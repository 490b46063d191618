package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
	"golang.org/x/sys/unix"
)

// `ringcp cdi-importer` as CDI's controller runs it, in an importer pod's
// world without a cluster: a loop device at /dev/cdi-block-volume or an
// ext4 volume at /data, images served by nginx and versitygw, progress
// scraped with CDI's expression, the termination message read back.

// TestCDIImportHTTPBlockVolume: a raw image over HTTP onto a block
// volume as UID 107: progress seen rising, CDI's message, the image's
// bytes on the device and the device's other bytes kept.
func TestCDIImportHTTPBlockVolume(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 12<<20+4097, 1)
	s := webtest.Nginx(t, dir, webtest.Config{})
	dev, fill := filled(t, 16<<20)
	pod := podtest.New(t)
	pod.Block = dev
	asQemu(t, pod)
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"), "--max-rate", "4M")
	m := r.completed(t)
	deviceHolds(t, dev, want, fill[len(want):])
	if m.PreallocationApplied == nil || *m.PreallocationApplied || m.Ringcp == nil || m.Ringcp.Size != 16<<20 {
		t.Errorf("termination message: %s", r.termination(t))
	}
	seen := r.scraped()
	mid := false
	for i, v := range seen {
		if i > 0 && v < seen[i-1] || v > 100 {
			t.Fatalf("progress went %v", seen)
		}
		mid = mid || v > 0 && v < 100
	}
	if !mid {
		t.Fatalf("no progress between 0 and 100 was scraped: %v", seen)
	}
}

// TestCDIImportXzFilesystemVolume: an xz image onto a filesystem volume
// with IMPORTER_IMAGE_SIZE: disk.img is CDI's size, the image then
// zeros, sparse, 0660.
func TestCDIImportXzFilesystemVolume(t *testing.T) {
	webtest.Need(t, "xz", "xz-utils")
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	want := diskImage(t, raw, 20<<20+511, 2)
	if out, err := exec.Command("xz", "-T2", "--block-size=4MiB", "-k", raw).CombinedOutput(); err != nil {
		t.Fatalf("xz: %v: %s", err, out)
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	data := fsVolume(t, 96<<20)
	pod := podtest.New(t)
	pod.Data = data
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw.xz", "IMPORTER_IMAGE_SIZE=40Mi"))
	r.completed(t)
	img := filepath.Join(data, "disk.img")
	got, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if wantSize := cdi.UsableSpace(0.055, 40<<20); int64(len(got)) != wantSize {
		t.Errorf("disk.img has %d bytes, CDI makes it %d", len(got), wantSize)
	}
	if !bytes.Equal(got[:len(want)], want) || !bytes.Equal(got[len(want):], make([]byte, len(got)-len(want))) {
		t.Fatalf("disk.img is not the image then zeros (first difference at %d)", firstDiff(got, want))
	}
	var st unix.Stat_t
	unix.Stat(img, &st)
	if alloc := st.Blocks * 512; alloc > 8<<20 {
		t.Errorf("disk.img takes %d bytes: its holes and zeros were written", alloc)
	}
	if st.Mode&0o777 != 0o660 {
		t.Errorf("disk.img has mode %o, CDI's is 0660", st.Mode&0o777)
	}
	mustNotExist(t, img+".ringcp-state")
}

// TestCDIImportS3: an object of versitygw with the Secret's keys onto a
// filesystem volume; the keys are in neither the message nor the log.
func TestCDIImportS3(t *testing.T) {
	// CDI signs for the endpoint host's first label (127 of 127.0.0.1)
	// unless the host is AWS's; the store here serves that region.
	s3 := webtest.VersityIn(t, "127")
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 9<<20+4097, 3)
	host := strings.TrimPrefix(s3.URL, "http://")
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "images", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "images", "vm/disk.raw", bytes.NewReader(want), int64(len(want)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	data := fsVolume(t, 64<<20)
	pod := podtest.New(t)
	pod.Data = data
	env := cdiEnv("s3", s3.URL+"/images/vm/disk.raw", "IMPORTER_ACCESS_KEY_ID="+s3.AccessKey, "IMPORTER_SECRET_KEY="+s3.SecretKey)
	r := startImporter(t, pod, env)
	r.completed(t)
	if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
		t.Fatal("disk.img is not the object")
	}
	// A key that is wrong: refused, and neither key is said.
	pod2 := podtest.New(t)
	pod2.Data = data
	env = cdiEnv("s3", s3.URL+"/images/vm/disk.raw", "IMPORTER_ACCESS_KEY_ID="+s3.AccessKey, "IMPORTER_SECRET_KEY=wrong-"+s3.SecretKey)
	r2 := startImporter(t, pod2, env)
	if code := r2.wait(t, time.Minute); code == 0 {
		t.Fatalf("a wrong secret key imported: %s", r2.termination(t))
	}
	for _, out := range []string{r.out.String(), r.termination(t), r2.out.String(), r2.termination(t)} {
		if strings.Contains(out, s3.SecretKey) {
			t.Fatalf("the secret key is said: %s", out)
		}
	}
}

// TestCDIImportResumeAfterKill: an import onto a block volume killed with
// SIGKILL part-way (the pod's container restarted) resumes from its
// state in scratch space: fewer bytes the second time, the device right.
func TestCDIImportResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 24<<20+4097, 4)
	s := webtest.Nginx(t, dir, webtest.Config{})
	dev, fill := filled(t, 32<<20)
	scratch := t.TempDir()
	pod := podtest.New(t)
	pod.Block, pod.Scratch = dev, scratch
	env := cdiEnv("http", s.URL+"/disk.raw")
	r := startImporter(t, pod, env, "--max-rate", "4M", "--sync-every", "200ms", "--block-size", "256k")
	state := filepath.Join(scratch, cdi.BlockStateName)
	deadline := time.Now().Add(time.Minute)
	for readState(t, state) < 8<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the state does not record 8 MiB:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	if code := r.wait(t, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d after SIGKILL", code)
	}
	// The container restarts: the same volumes, a new termination log.
	if err := os.WriteFile(pod.TerminationLog, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	again := startImporter(t, pod, env)
	m := again.completed(t)
	deviceHolds(t, dev, want, fill[len(want):])
	if m.Ringcp == nil || !m.Ringcp.Resumed || m.Ringcp.Bytes >= int64(len(want)) {
		t.Fatalf("the second run did not resume: %s", again.termination(t))
	}
}

// TestCDIImportRefusals: what ringcp does not import is refused before
// anything is written, with a termination message that says so.
func TestCDIImportRefusals(t *testing.T) {
	webtest.Need(t, "qemu-img", "qemu-utils")
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	diskImage(t, raw, 3<<20, 5)
	webtest.Need(t, "xz", "xz-utils")
	for _, c := range [][]string{
		{"-O", "qcow2", "disk.qcow2"},
		{"-O", "vmdk", "-o", "subformat=monolithicFlat", "flat.vmdk"}, // a descriptor and its extent
		{"-O", "vhdx", "disk.vhdx"},
	} {
		args := append(append([]string{"convert", "-f", "raw"}, c[:len(c)-1]...), raw, filepath.Join(dir, c[len(c)-1]))
		if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img: %v: %s", err, out)
		}
	}
	// An overlay naming disk.qcow2 beside it: CDI refuses it, and copier
	// would follow the name at the URL.
	if out, err := exec.Command("qemu-img", "create", "-f", "qcow2", "-b", "disk.qcow2", "-F", "qcow2", filepath.Join(dir, "top.qcow2")).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v: %s", err, out)
	}
	if out, err := exec.Command("xz", "-k", "-T2", filepath.Join(dir, "disk.qcow2")).CombinedOutput(); err != nil {
		t.Fatalf("xz: %v: %s", err, out)
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	whole := webtest.Nginx(t, dir, webtest.Config{NoRanges: true})
	data := fsVolume(t, 32<<20)
	for _, c := range []struct {
		name string
		env  []string
		data string
		says string
		code int
	}{
		{"xz-compressed qcow2", cdiEnv("http", s.URL+"/disk.qcow2.xz"), data, "only uncompressed", 2},
		{"qcow2 from a server without ranges", cdiEnv("http", whole.URL+"/disk.qcow2"), data, "at any offset", 2},
		{"qcow2 over a backing file", cdiEnv("http", s.URL+"/top.qcow2"), data, "invalid because it has backing file disk.qcow2", 2},
		{"vmdk descriptor", cdiEnv("http", s.URL+"/flat.vmdk"), data, "descriptor", 2},
		{"vhdx", cdiEnv("http", s.URL+"/disk.vhdx"), data, "vhdx", 2},
		{"registry", cdiEnv("registry", "docker://x/y"), data, "registry", 2},
		{"sha1", cdiEnv("http", s.URL+"/disk.raw", "IMPORTER_CHECKSUM=sha1:"+strings.Repeat("a", 40)), data, "sha1", 2},
		// No volume at /data: the directory is the container's own
		// filesystem, which goes with it.
		{"data dir not a mount", cdiEnv("http", s.URL+"/disk.raw"), "", "not a mount", 2},
		{"not found", cdiEnv("http", s.URL+"/nothing"), data, "not found", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := podtest.New(t)
			pod.Data = c.data
			r := startImporter(t, pod, c.env)
			if code := r.wait(t, time.Minute); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if msg := r.termination(t); !strings.Contains(strings.ToLower(msg), c.says) || strings.Contains(msg, "Import Complete") {
				t.Errorf("termination message %q does not say %q", msg, c.says)
			}
			if c.data != "" {
				mustNotExist(t, filepath.Join(c.data, "disk.img"))
			}
		})
	}
}
