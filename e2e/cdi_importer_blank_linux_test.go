package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/internal/podtest"
	"golang.org/x/sys/unix"
)

// A blank disk (IMPORTER_SOURCE none), as CDI's importer makes one
// (cmd/cdi-importer's handleEmptyImage and createBlankImage): on a
// filesystem volume a raw disk.img of the usable space of
// min(free space, IMPORTER_IMAGE_SIZE) (qemu-img create, sparse, or
// fallocated with preallocation), mode 0660; on a block volume nothing
// without preallocation, and with it zeros over min(device size,
// IMPORTER_IMAGE_SIZE) bytes exactly (dd from /dev/zero), the rest of the
// device left as it was.

// blankEnv is CDI's environment for a blank disk of size.
func blankEnv(size string, over ...string) []string {
	return cdiEnv("none", "", append([]string{"IMPORTER_IMAGE_SIZE=" + size}, over...)...)
}

// TestCDIBlankFilesystemVolume: disk.img is CDI's size and reads as
// zeros, whatever an earlier disk.img held; sparse, or allocated with
// preallocation; 0660; the message CDI writes.
func TestCDIBlankFilesystemVolume(t *testing.T) {
	for _, c := range []struct {
		name, size string
		prealloc   bool
	}{
		{"sparse", "20Mi", false},
		{"preallocated", "20Mi", true},
		{"larger than the volume", "1Gi", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := fsVolume(t, 64<<20)
			img := filepath.Join(data, "disk.img")
			// The volume held an image before.
			if err := os.WriteFile(img, bytes.Repeat([]byte{0xAA}, 3<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			var sfs unix.Statfs_t
			if err := unix.Statfs(data, &sfs); err != nil {
				t.Fatal(err)
			}
			// CDI measures the volume before the old image is cut,
			// as ringcp does.
			free := int64(sfs.Bavail) * sfs.Bsize
			q, err := cdi.ParseQuantity(c.size)
			if err != nil {
				t.Fatal(err)
			}
			pod := podtest.New(t)
			pod.Data = data
			prealloc := map[bool]string{false: "PREALLOCATION=false", true: "PREALLOCATION=true"}[c.prealloc]
			r := startImporter(t, pod, blankEnv(c.size, prealloc))
			m := r.completed(t)
			if m.PreallocationApplied == nil || *m.PreallocationApplied != c.prealloc {
				t.Errorf("termination message: %s", r.termination(t))
			}
			got, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			wantSize := cdi.UsableSpace(0.055, min(q, free))
			if int64(len(got)) != wantSize {
				t.Errorf("disk.img has %d bytes, CDI makes it %d", len(got), wantSize)
			}
			if !bytes.Equal(got, make([]byte, len(got))) {
				t.Fatalf("the blank disk is not zeros (at %d)", firstDiff(got, make([]byte, len(got))))
			}
			alloc := allocated(t, img)
			if c.prealloc && alloc < int64(len(got)) || !c.prealloc && alloc > 1<<20 {
				t.Errorf("disk.img of %d bytes takes %d (preallocation %v)", len(got), alloc, c.prealloc)
			}
			var st unix.Stat_t
			unix.Stat(img, &st)
			if st.Mode&0o777 != 0o660 {
				t.Errorf("disk.img has mode %o, CDI's is 0660", st.Mode&0o777)
			}
		})
	}
}

// TestCDIBlankBlockVolume: without preallocation the device is left as
// it is; with it, zeros over min(device, IMPORTER_IMAGE_SIZE) bytes to
// the byte (a size that is no whole sector included), and not one more.
func TestCDIBlankBlockVolume(t *testing.T) {
	for _, c := range []struct {
		name, size string
		prealloc   bool
		zeros      int
	}{
		{"left alone", "8Mi", false, 0},
		{"preallocated", "3Mi", true, 3 << 20},
		{"preallocated, odd size", "3000001", true, 3000001},
		{"preallocated, larger than the device", "1Gi", true, 8 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev, fill := filled(t, 8<<20)
			pod := podtest.New(t)
			pod.Block = dev
			prealloc := map[bool]string{false: "PREALLOCATION=false", true: "PREALLOCATION=true"}[c.prealloc]
			r := startImporter(t, pod, blankEnv(c.size, prealloc))
			m := r.completed(t)
			if m.PreallocationApplied == nil || *m.PreallocationApplied != c.prealloc {
				t.Errorf("termination message: %s", r.termination(t))
			}
			deviceHolds(t, dev, make([]byte, c.zeros), fill[c.zeros:])
		})
	}
}
