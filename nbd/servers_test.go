package nbd

import (
	"context"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Real servers for the tests, started by internal/nbdtest (socket
// activation: no port races; killed at the test's end). These names keep
// the tests short.

type transport = nbdtest.Transport

const (
	overUnix = nbdtest.Unix
	overTCP  = nbdtest.TCP
)

var transports = nbdtest.Transports

// needBin skips the test when a binary is missing (CI has them: .ci/run
// installs qemu-utils, nbdkit and libnbd-bin).
func needBin(t *testing.T, name string) { nbdtest.Need(t, name) }

// serve starts argv with the socket as fd 3 and returns the URI.
func serve(t *testing.T, tr transport, export string, argv ...string) string {
	t.Helper()
	return nbdtest.Start(t, tr, export, argv...).URI
}

// qemuNBD serves an image with qemu-nbd: persistent, for up to 8 clients.
func qemuNBD(t *testing.T, tr transport, format, image string, extra ...string) string {
	t.Helper()
	return nbdtest.QemuNBD(t, tr, format, image, extra...).URI
}

// nbdkit serves a plugin (with filters) in the foreground.
func nbdkit(t *testing.T, tr transport, args ...string) string {
	t.Helper()
	return nbdtest.Nbdkit(t, tr, args...).URI
}

// qemuImg runs qemu-img.
func qemuImg(t *testing.T, args ...string) { nbdtest.QemuImg(t, args...) }

// dial connects with short timeouts and closes at the test's end.
func dial(t *testing.T, uri string, opt Options) *Client {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, uri, opt)
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
