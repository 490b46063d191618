package blocksync

import (
	"io"
	"os"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
)

// devDevice is a loop device of size bytes over a sparse file, with
// more losetup options.
func devDevice(t *testing.T, size int64, opts ...string) (dev, backing string) {
	t.Helper()
	return blocktest.Device(t, size, opts...)
}

// writeDevice writes b at the device's start and makes it durable, so
// that what follows counts only its own writes.
func writeDevice(t *testing.T, dev string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// readDevice reads a whole device.
func readDevice(t *testing.T, dev string) []byte {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
