package e2e

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Copies over TLS (nbds://, nbds+unix://) with servers that require it,
// credentials made for the test: byte for byte, both directions, both
// servers.

// TestNBDTLSCopies: a file to an nbdkit export over nbds:// (TCP) and
// back, with --verify; and a qcow2 imported from qemu-nbd over
// nbds+unix://, against qemu-img convert.
func TestNBDTLSCopies(t *testing.T) {
	nbdtest.Need(t, "nbdkit", "qemu-nbd", "qemu-img", "qemu-io")
	certs := nbdtest.TLSDir(t)
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src"), filepath.Join(dir, "back")
	const size = 9<<20 + 12345
	data := randomFile(t, src, size, 51)

	export := nbdtest.Secure(nbdtest.Nbdkit(t, nbdtest.TCP, "--tls=require", "--tls-certificates="+certs, "memory", sizeArg(size)).URI, certs)
	jsonCopy(t, "--verify", src, export)
	jsonCopy(t, "--verify", export, back)
	sameFile(t, "file -> nbds export -> file", back, data)

	top := sparseQcow2(t, dir)
	ref, out := filepath.Join(dir, "ref.raw"), filepath.Join(dir, "out.raw")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", top, ref)
	srv := nbdtest.QemuNBD(t, nbdtest.Unix, "qcow2", top, "-r",
		"--object", "tls-creds-x509,id=tls0,endpoint=server,dir="+certs, "--tls-creds", "tls0")
	jsonCopy(t, nbdtest.Secure(srv.URI, certs), out)
	want := fileBytes(t, ref)
	sameFile(t, "qcow2 imported over nbds+unix", out, want)
}
