package main

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
		{"connections", []string{"--nbd-connections", "0", src, dst}, "--nbd-connections 0: want 1 to 64"},
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
