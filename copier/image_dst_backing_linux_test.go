package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// TestQcow2DstBackingGuessed: a --backing whose format is guessed from
// a qcow2 header that names another file is refused (the new image
// would tell QEMU it is qcow2); said raw, it is one.
func TestQcow2DstBackingGuessed(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	secretPath, _ := secretFile(t, dir)
	disk := rawDiskWithHeader(t, dir, secretPath)
	src := filepath.Join(dir, "src")
	b := mustRead(t, disk)
	copy(b[1<<20:], randomBytes(64<<10, 3))
	writeFile(t, src, b)
	dst := filepath.Join(dir, "out.qcow2")
	o := copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: disk}}
	_, err := copier.Copy(context.Background(), o)
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "guessed") || !strings.Contains(err.Error(), "BackingFormat") {
		t.Fatalf("got %v; want a refusal of the guessed backing format", err)
	}
	o.Qcow2.BackingFormat = copier.FormatRaw
	if _, err := copier.Copy(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst)
}

// TestQcow2DstBackingDevice: a raw backing file that is a block device
// (an LV, as a platform's base images are) is compared with by its size,
// not its stat's 0 bytes: qemu-img compare finds the image equal to SRC
// where SRC has zeros and holes over the device's data.
func TestQcow2DstBackingDevice(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	dev, _ := blocktest.Device(t, 4<<20)
	base := randomBytes(4<<20, 31)
	writeFile(t, dev, base)
	src := filepath.Join(dir, "src")
	b := bytes.Clone(base)
	clear(b[1<<20 : 2<<20])                   // zeros over the base's data
	copy(b[3<<20:], randomBytes(100<<10, 32)) // data that differs
	writeFile(t, src, b)
	punch(t, src, 1<<20, 1<<20)
	dst := filepath.Join(dir, "out.qcow2")
	o := copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2,
		Qcow2: copier.Qcow2Options{Backing: dev, BackingFormat: copier.FormatRaw}}
	if _, err := copier.Copy(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst)
}

// TestQcow2DstBackingNames: --backing names that are no backing file
// QEMU would read as ringcp compared with are refused before DST is
// made: DST itself, a FIFO (whose open would block), a name QEMU reads
// through a protocol (though a local file of that name exists).
func TestQcow2DstBackingNames(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(8192, 1))
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // free an open that blocked
		if fd, err := unix.Open(filepath.Join(dir, "fifo"), unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
	writeFile(t, filepath.Join(dir, "nbd:host:10809"), randomBytes(8192, 2))
	for _, name := range []string{"new.qcow2", "fifo", "nbd:host:10809"} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: filepath.Join(dir, "new.qcow2"),
					DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: name, BackingFormat: copier.FormatRaw}})
				done <- err
			}()
			select {
			case err := <-done:
				var refused *copier.RefusedError
				if !errors.As(err, &refused) || refused.Field != "Qcow2.Backing" {
					t.Fatalf("got %v, want a refusal on Qcow2.Backing", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("still blocked after 20s")
			}
			if _, err := os.Stat(filepath.Join(dir, "new.qcow2")); err == nil {
				t.Fatal("DST was made")
			}
		})
	}
}

// TestQcow2DstPastFileLimit: a qcow2 DST of a virtual size past the
// largest file DST's filesystem allows (ext4: 16 TiB) is made: its file
// holds what SRC has, not its virtual size.
func TestQcow2DstPastFileLimit(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "big.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", src, "20T")
	qemuIO(t, src, "write -P 9 17T 64k")
	dst := filepath.Join(dir, "out.qcow2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	// qemu-img compare walks 20 TiB slowly: what was written reads back.
	qemuIO(t, dst, "read -P 9 17T 64k", "read -P 0 0 1m", "read -P 0 21990232489984 65536")
}

// TestQcow2DstBackingChanged: a backing file replaced (renamed over) or
// written during the copy fails it, and the new image never gets its
// name: it stores only what differed from the backing file ringcp read,
// and would name another, so QEMU would read it differently from SRC.
func TestQcow2DstBackingChanged(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, how := range []string{"replaced", "written"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "base.raw")
			b := randomBytes(8<<20, 41)
			writeFile(t, base, b)
			src := filepath.Join(dir, "src")
			copy(b[5<<20:], randomBytes(64<<10, 42))
			writeFile(t, src, b)
			dst := filepath.Join(dir, "out.qcow2")
			changed := false
			o := copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2,
				Qcow2:     copier.Qcow2Options{Backing: base, BackingFormat: copier.FormatRaw},
				BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 8 << 20, ProgressInterval: 10 * time.Millisecond,
				OnProgress: func(s copier.Status) {
					if changed || s.BytesDone < 1<<20 {
						return
					}
					changed = true
					if how == "replaced" {
						other := filepath.Join(dir, "other.raw")
						writeFile(t, other, make([]byte, 8<<20))
						if err := os.Rename(other, base); err != nil {
							t.Error(err)
						}
						return
					}
					f, err := os.OpenFile(base, os.O_WRONLY, 0)
					if err != nil {
						t.Error(err)
						return
					}
					defer f.Close()
					if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
						t.Error(err)
					}
				}}
			_, err := copier.Copy(context.Background(), o)
			if !changed {
				t.Fatal("the copy ended before the backing file was changed")
			}
			if err == nil || !strings.Contains(err.Error(), "backing file") {
				t.Fatalf("err = %v; want a failure naming the backing file that changed", err)
			}
			if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("DST was given its name over a backing file that changed: %v", err)
			}
		})
	}
}

// TestQcow2DstBackingTruncated: a backing file cut short during the copy
// fails it naming the backing file as the cause, not only the write to
// DST that could not compare its clusters with it.
func TestQcow2DstBackingTruncated(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	base := filepath.Join(dir, "base.raw")
	b := randomBytes(8<<20, 43)
	writeFile(t, base, b)
	src := filepath.Join(dir, "src")
	copy(b[5<<20:], randomBytes(64<<10, 44))
	writeFile(t, src, b)
	dst := filepath.Join(dir, "out.qcow2")
	cut := false
	o := copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2,
		Qcow2:     copier.Qcow2Options{Backing: base, BackingFormat: copier.FormatRaw},
		BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 8 << 20, ProgressInterval: 10 * time.Millisecond,
		OnProgress: func(s copier.Status) {
			if cut || s.BytesDone < 1<<20 || s.BytesDone >= s.BytesTotal {
				return
			}
			cut = true
			if err := os.Truncate(base, 4096); err != nil {
				t.Error(err)
			}
		}}
	_, err := copier.Copy(context.Background(), o)
	if !cut {
		t.Fatal("the copy ended before the backing file was cut")
	}
	if err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "backing file") {
		t.Fatalf("err = %v; want a failure naming the backing file %s", err, base)
	}
	t.Log(err)
	if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DST was given its name over a backing file cut short: %v", err)
	}
}
