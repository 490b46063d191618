package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Refusals on NBD ends: exit 2 with one line on stderr, before anything is
// written; the DST export reads back exactly as it did.

func TestNBDRefusals(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 1<<20, 1)
	old := enginetest.RandomBytes(2<<20, 2)
	dst := memory(t, nbdtest.Unix, 2<<20)
	fillExport(t, dst, old)
	small := memory(t, nbdtest.Unix, 1<<20-1)
	readOnly := nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "memory", "2M").URI
	strict := memory(t, nbdtest.TCP, 2<<20, "--filter=blocksize-policy", "blocksize-minimum=4096", "blocksize-error-policy=error")
	noFlush := nbdtest.Nbdkit(t, nbdtest.Unix, "eval", "get_size=echo 2097152",
		"pread=dd if=/dev/zero bs=$3 count=1 status=none", "pwrite=cat >/dev/null").URI
	missing := "nbd+unix:///?socket=" + filepath.Join(dir, "no-such-socket")
	certs := nbdtest.TLSDir(t)
	secure := nbdtest.Nbdkit(t, nbdtest.TCP, "--tls=require", "--tls-certificates="+certs, "memory", "2M").URI

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"same-export", []string{dst, dst}, "SRC and DST are the same NBD export"},
		{"read-only", []string{src, readOnly}, "the NBD export is read-only"},
		{"too-small", []string{src, small}, "NBD export too small: 1024 KiB (1048575 bytes), the copy needs 1.00 MiB (1048576 bytes)"},
		{"range-too-far", []string{"--dst-offset", "1048577", src, dst}, "NBD export too small"},
		{"tls-psk", []string{src, "nbds://localhost/disk?tls-type=psk"}, "tls-type=psk is not supported"},
		{"tls-not-offered", []string{src, nbdtest.Secure(dst, certs)}, "the server does not offer TLS"},
		{"tls-other-ca", []string{src, nbdtest.Secure(secure, nbdtest.TLSDir(t))}, "certificate signed by unknown authority"},
		{"tls-required", []string{src, secure}, "the server requires TLS: name it with nbds://"},
		{"no-flush", []string{src, noFlush}, "does not offer FLUSH"},
		{"unreachable", []string{src, missing}, "cannot open the NBD export"},
		{"block-size", []string{"--block-size", "6144", src, strict}, "--block-size 6144 is not a multiple of the server's minimum block size 4096"},
		{"dst-offset", []string{"--dst-offset", "512", src, strict}, "--dst-offset 512 is not a multiple of the server's minimum block size 4096"},
		{"src-offset", []string{"--src-offset", "512", "--length", "4096", strict, dst}, "--src-offset 512 is not a multiple"},
		{"engine", []string{"--engine", "uring", src, dst}, "--engine uring: it moves data through file descriptors only"},
		{"offload", []string{"--offload", "reflink", src, dst}, "(NBD export) has no copy offload: only files have one"},
		{"connections", []string{"--nbd-connections", "65", src, dst}, "--nbd-connections 65: out of range (1 to 64)"},
		{"no-connections", []string{"--nbd-connections", "0", src, dst}, `"--nbd-connections" flag: must be more than 0`},
		{"resume-no-state", []string{"--resume", src, dst}, "a resumable copy to an NBD export needs a state file path (--state)"},
		{"resume-from-export", []string{"--resume", "--state", filepath.Join(dir, "state"), dst, filepath.Join(dir, "out")}, "--resume cannot resume from an NBD export"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cli(t, c.args...).want(t, exitRefused, c.want)
			sameBytes(t, "DST export after a refusal", exportBytes(t, dst), old)
		})
	}
	// Without the barrier, an export without FLUSH is fine.
	r := cli(t, "--sync", "none", src, noFlush)
	r.want(t, exitOK)
}

// TestNBDSameExportOtherName: two URIs naming one export, by a symlink to
// its socket or by another name of the host, are the same export.
func TestNBDSameExportOtherName(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	a := memory(t, nbdtest.TCP, 1<<20)
	b := strings.Replace(a, "127.0.0.1", "localhost", 1)
	cli(t, a, b).want(t, exitRefused, "SRC and DST are the same NBD export")
}

// TestNBDSameExportOtherAddress: one server listening on every address
// of this host serves one export whichever of them a URI names
// (127.0.0.1, [::1], 127.0.0.2, a v4-mapped address), and nbdkit serves
// one disk under any export name. A copy within it whose ranges overlap
// is refused with nothing written (issue 20: it overwrote SRC while
// reading it, exit 0); ranges apart are copied.
func TestNBDSameExportOtherAddress(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	a := memory(t, nbdtest.TCPAny, 2<<20)
	old := enginetest.RandomBytes(2<<20, 3)
	fillExport(t, a, old)
	port := strings.TrimSuffix(strings.TrimPrefix(a, "nbd://127.0.0.1:"), "/")
	overlap := []string{"--src-offset", "0", "--dst-offset", "524288", "--length", "1048576"}
	for _, b := range []string{"[::1]", "127.0.0.2", "localhost", "[::ffff:127.0.0.1]", "127.0.0.1"} {
		for _, name := range []string{"", "another-name"} {
			other := "nbd://" + b + ":" + port + "/" + name
			cli(t, append(overlap, a, other)...).want(t, exitRefused, "same NBD export")
			sameBytes(t, other+" after a refusal", exportBytes(t, a), old)
		}
	}
	cli(t, "--src-offset", "0", "--dst-offset", "1048576", "--length", "1048576", a, "nbd://[::1]:"+port+"/").want(t, exitOK)
	sameBytes(t, "a copy between ranges apart", exportBytes(t, a)[1<<20:], old[:1<<20])
}

// TestNBDTwoExportsOneServer: qemu-storage-daemon serving two images as
// two exports of one socket. Their bytes differ, so the probe proves them
// two disks and the copy runs; the same image exported twice under two
// names cannot be told apart and is refused.
func TestNBDTwoExportsOneServer(t *testing.T) {
	nbdtest.Need(t, "qemu-storage-daemon")
	dir := t.TempDir()
	imgA, imgB := filepath.Join(dir, "a.raw"), filepath.Join(dir, "b.raw")
	data := randomFile(t, imgA, 1<<20, 4)
	randomFile(t, imgB, 1<<20, 5)
	s := nbdtest.Start(t, nbdtest.Unix, "a", "qemu-storage-daemon",
		"--blockdev", "driver=file,node-name=fa,filename="+imgA,
		"--blockdev", "driver=file,node-name=fb,filename="+imgB,
		"--nbd-server", "addr.type=fd,addr.str=3",
		"--export", "type=nbd,id=ea,node-name=fa,name=a,writable=on",
		"--export", "type=nbd,id=eb,node-name=fb,name=b,writable=on",
		"--export", "type=nbd,id=ea2,node-name=fa,name=a-again,writable=on")
	uriB := strings.Replace(s.URI, "///a?", "///b?", 1)
	uriA2 := strings.Replace(s.URI, "///a?", "///a-again?", 1)
	cli(t, uriA2, s.URI).want(t, exitRefused, "maybe the same NBD export")
	sameBytes(t, "a.raw after a refusal", readRange(t, imgA, 0, 1<<20), data)
	cli(t, s.URI, uriB).want(t, exitOK)
	sameBytes(t, "b.raw", readRange(t, imgB, 0, 1<<20), data)
}
