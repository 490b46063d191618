package qcow2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFileOpenerRefuses: backing names that are not local files storing
// bytes: a FIFO (whose open would block), a character device, a /proc
// file, a directory, and names QEMU reads through a protocol (here a
// local file of that name exists: reading it would read other bytes than
// QEMU does).
func TestFileOpenerRefuses(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Free an open that blocked (on a reader that does not refuse it).
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
	proto := "nbd:localhost:10809"
	if err := os.WriteFile(filepath.Join(dir, proto), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fifo, "/dev/null", "/proc/self/status", dir, proto, "json:{}"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			img := filepath.Join(dir, "img.qcow2")
			qemuImg(t, "create", "-q", "-f", "qcow2", "-u", "-b", name, "-F", "raw", img, "1M")
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			done := make(chan error, 1)
			go func() {
				im, err := Open(f, Options{Opener: FileOpener})
				if err == nil {
					im.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !isCause(err, ErrBackingRefused) {
					t.Fatalf("backing file %s: %v; want ErrBackingRefused", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("backing file %s: Open still blocked after 10s", name)
			}
		})
	}
}
