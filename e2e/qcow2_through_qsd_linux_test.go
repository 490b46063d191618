package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// qemu-storage-daemon is the third server a hypervisor uses (libvirt's
// block jobs, KubeVirt). Its NBD export differs from qemu-nbd's: it
// advertises CAN_MULTI_CONN on a writable export, so ringcp opens several
// connections to it, and it is configured through --blockdev and --export.
// TestQcow2Import imports through it too.

// TestQemuStorageDaemonExport: a raw file with holes into a new qcow2
// that qemu-storage-daemon serves writable (several connections, as it
// allows multi-conn), then from that export to another daemon's export
// (NBD to NBD). qemu-img compare finds both images identical to the raw
// file, and qemu-img check finds no error in either.
func TestQemuStorageDaemonExport(t *testing.T) {
	nbdtest.Need(t, "qemu-storage-daemon", "qemu-img", "qemu-io")
	dir := t.TempDir()
	raw := filepath.Join(dir, "ref.raw")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", sparseQcow2(t, dir), raw)
	first, second := filepath.Join(dir, "first.qcow2"), filepath.Join(dir, "second.qcow2")
	for _, img := range []string{first, second} {
		nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", img, "64M")
	}

	a := nbdtest.QemuStorageDaemon(t, nbdtest.Unix, "qcow2", first, true)
	jsonCopy(t, "--nbd-connections", "4", raw, a.URI)
	a.Stop()
	b := nbdtest.QemuStorageDaemon(t, nbdtest.TCP, "qcow2", second, true)
	a = nbdtest.QemuStorageDaemon(t, nbdtest.Unix, "qcow2", first, false)
	jsonCopy(t, a.URI, b.URI)
	a.Stop()
	b.Stop()

	for _, img := range []string{first, second} {
		if out, err := exec.Command("qemu-img", "compare", "-f", "raw", "-F", "qcow2", raw, img).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img compare %s: %v\n%s", filepath.Base(img), err, out)
		}
		nbdtest.QemuImg(t, "check", "-q", img)
	}
}
