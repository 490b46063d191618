package copier_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"golang.org/x/sys/unix"
)

// TestPrepareRefusesStreams: a FIFO DST or a character device on either
// side is refused at once. Opening a FIFO to look at it would wait for a
// writer forever, so Prepare must decide from stat before opening
// anything. (A FIFO SRC is a stream, read as cat reads it.)
func TestPrepareRefusesStreams(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "file"), filepath.Join(dir, "fifo")
	writeFile(t, file, noise(4096, 1))
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ src, dst, want string }{
		// A FIFO SRC is a stream (end_stream_linux.go): its open waits
		// for a writer, as cat's does.
		{file, fifo, "is a FIFO"},
		// /dev/zero is a SRC without end, /dev/full a DST where every
		// write fails (end_char_linux.go), /dev/tty another character
		// device: refused from stat, before anything is opened.
		{"/dev/zero", filepath.Join(dir, "new"), "never ends"},
		{file, "/dev/full", "every write fails"},
		{file, "/dev/tty", "is a character device"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := copier.Prepare(copier.Options{Src: c.src, Dst: c.dst})
			done <- err
		}()
		select {
		case err := <-done:
			var re *copier.RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s -> %s: %v, want a refusal saying %q", c.src, c.dst, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s -> %s: Prepare still waiting after 10 s (opened a FIFO?)", c.src, c.dst)
		}
	}
}
