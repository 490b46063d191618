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
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
	"golang.org/x/sys/unix"
)

// Disk images in a container (qcow2, a cloud image's format, and sparse
// vmdk) imported over http and s3 straight onto the volume, as CDI's
// importer converts them with qemu-img: the volume holds what
// `qemu-img convert -O raw` makes of the image, and the image's holes
// are not written.

// guestImage makes a disk image of format (qemu-img's -O, with opts) of
// a raw disk of size bytes in dir/name, and returns its guest's bytes as
// qemu-img converts them to raw. size is whole sectors, as an image's
// virtual size is (the data's odd ends are diskImage's).
func guestImage(t *testing.T, dir, name, format string, size int64, seed uint64, opts ...string) []byte {
	t.Helper()
	webtest.Need(t, "qemu-img", "qemu-utils")
	raw := filepath.Join(t.TempDir(), "disk.raw")
	diskImage(t, raw, size, seed)
	args := append([]string{"convert", "-f", "raw", "-O", format}, opts...)
	qemuImg(t, append(args, raw, filepath.Join(dir, name))...)
	back := filepath.Join(t.TempDir(), "back.raw")
	qemuImg(t, "convert", "-f", format, "-O", "raw", filepath.Join(dir, name), back)
	want, err := os.ReadFile(back)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(want)) != size {
		t.Fatalf("qemu-img converts the %s image to %d bytes, not %d", format, len(want), size)
	}
	return want
}

func qemuImg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img %v: %v: %s", args, err, out)
	}
}

// dataBytes is how many bytes of diskImage's disks are data: the image's
// holes, and no more, must stay unallocated.
const dataBytes = 1<<20 + 7 + 3<<20 + 511 + 1<<20 + 4097

// risingProgress wants the scrapes to rise to at most 100 and to have
// seen a value between 0 and 100.
func risingProgress(t *testing.T, seen []float64) {
	t.Helper()
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

// TestCDIImportQcow2BlockVolume: a qcow2 image over HTTP onto a block
// volume (a loop device over a sparse file): the guest's bytes then the
// device's zeros, its holes not written (the file beneath stays sparse),
// progress seen rising.
func TestCDIImportQcow2BlockVolume(t *testing.T) {
	dir := t.TempDir()
	want := guestImage(t, dir, "disk.qcow2", "qcow2", 20<<20+9*512, 11)
	s := webtest.Nginx(t, dir, webtest.Config{})
	dev, backing := blocktest.Device(t, 24<<20)
	pod := podtest.New(t)
	pod.Block = dev
	asQemu(t, pod)
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.qcow2"), "--max-rate", "1M")
	m := r.completed(t)
	deviceHolds(t, dev, want, make([]byte, 24<<20-len(want)))
	if m.Ringcp == nil || m.Ringcp.Size != 24<<20 {
		t.Errorf("termination message: %s", r.termination(t))
	}
	if alloc := allocated(t, backing); alloc > dataBytes+4<<20 {
		t.Errorf("the volume's file takes %d bytes for %d of data: the image's holes were written", alloc, dataBytes)
	}
	risingProgress(t, r.scraped())
}

// TestCDIImportImageFilesystemVolume: a qcow2 and a sparse vmdk of each
// kind over HTTP onto a filesystem volume: disk.img is the guest's
// bytes, sparse, 0660.
func TestCDIImportImageFilesystemVolume(t *testing.T) {
	for _, c := range []struct {
		name, format string
		opts         []string
	}{
		{"disk.qcow2", "qcow2", nil},
		{"disk.vmdk", "vmdk", []string{"-o", "subformat=monolithicSparse"}},
		{"stream.vmdk", "vmdk", []string{"-o", "subformat=streamOptimized"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			want := guestImage(t, dir, c.name, c.format, 16<<20+3*512, 12, c.opts...)
			s := webtest.Nginx(t, dir, webtest.Config{})
			data := fsVolume(t, 64<<20)
			pod := podtest.New(t)
			pod.Data = data
			r := startImporter(t, pod, cdiEnv("http", s.URL+"/"+c.name), "--max-rate", "1M")
			r.completed(t)
			img := filepath.Join(data, "disk.img")
			if got, err := os.ReadFile(img); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("disk.img is not the guest's bytes (%d bytes, first difference at %d): %v", len(got), firstDiff(got, want), err)
			}
			if alloc := allocated(t, img); alloc > dataBytes+1<<20 {
				t.Errorf("disk.img takes %d bytes for %d of data: its holes were written", alloc, dataBytes)
			}
			var st unix.Stat_t
			unix.Stat(img, &st)
			if st.Mode&0o777 != 0o660 {
				t.Errorf("disk.img has mode %o, CDI's is 0660", st.Mode&0o777)
			}
			risingProgress(t, r.scraped())
			mustNotExist(t, img+".ringcp-state")
		})
	}
}

// TestCDIImportQcow2S3: a qcow2 object of versitygw with the Secret's
// keys onto a filesystem volume.
func TestCDIImportQcow2S3(t *testing.T) {
	s3 := webtest.VersityIn(t, "127") // CDI's region for 127.0.0.1
	dir := t.TempDir()
	want := guestImage(t, dir, "disk.qcow2", "qcow2", 9<<20+7*512, 13)
	image, err := os.ReadFile(filepath.Join(dir, "disk.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(strings.TrimPrefix(s3.URL, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "images", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "images", "vm/disk.qcow2", bytes.NewReader(image), int64(len(image)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	data := fsVolume(t, 64<<20)
	pod := podtest.New(t)
	pod.Data = data
	env := cdiEnv("s3", s3.URL+"/images/vm/disk.qcow2", "IMPORTER_ACCESS_KEY_ID="+s3.AccessKey, "IMPORTER_SECRET_KEY="+s3.SecretKey)
	r := startImporter(t, pod, env)
	r.completed(t)
	img := filepath.Join(data, "disk.img")
	if got, _ := os.ReadFile(img); !bytes.Equal(got, want) {
		t.Fatalf("disk.img is not the guest's bytes (first difference at %d)", firstDiff(got, want))
	}
	if alloc := allocated(t, img); alloc > dataBytes+1<<20 {
		t.Errorf("disk.img takes %d bytes for %d of data: its holes were written", alloc, dataBytes)
	}
}

// TestCDIImportQcow2ResumeAfterKill: a qcow2 import onto a block volume
// killed with SIGKILL part-way resumes from its state in scratch space.
func TestCDIImportQcow2ResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	want := guestImage(t, dir, "disk.qcow2", "qcow2", 24<<20+5*512, 14)
	s := webtest.Nginx(t, dir, webtest.Config{})
	dev, fill := filled(t, 32<<20)
	scratch := t.TempDir()
	pod := podtest.New(t)
	pod.Block, pod.Scratch = dev, scratch
	env := cdiEnv("http", s.URL+"/disk.qcow2")
	r := startImporter(t, pod, env, "--max-rate", "2M", "--sync-every", "200ms", "--block-size", "256k")
	state := filepath.Join(scratch, cdi.BlockStateName)
	deadline := time.Now().Add(time.Minute)
	for readState(t, state) < 10<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the state does not record 10 MiB:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	if code := r.wait(t, 10*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d after SIGKILL", code)
	}
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
