package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// An NBD export whose server, on this host, serves the very file the
// other end names: nbdkit's file plugin takes no lock (QEMU's locks tell
// qemu-nbd already), so ringcp s.img nbd+unix:///?socket=S, with S's
// nbdkit serving s.img, copied the file onto itself through the server:
// with the ranges overlapping, SRC was overwritten while being read and
// DST ended wrong, exit 0 (issue 20's second review).

// TestNBDServesLocalEnd: a local SRC and an export of it, over a Unix
// socket and TCP, and the reverse direction: refused where the ranges
// overlap, nothing written; ranges apart are copied.
func TestNBDServesLocalEnd(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	for _, tr := range nbdtest.Transports {
		t.Run(string(tr), func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "s.img")
			data := randomFile(t, img, 8<<20, 81)
			s := nbdtest.Nbdkit(t, tr, "file", img)
			cli(t, "--dst-offset", "65536", "--length", "4194304", img, s.URI).want(t, exitRefused, "has "+img+" open")
			cli(t, "--src-offset", "65536", "--length", "4194304", s.URI, img).want(t, exitRefused, "has "+img+" open")
			got, _ := os.ReadFile(img)
			sameBytes(t, "the file after two refusals", got, data)
			cli(t, "--dst-offset", "4194304", "--length", "4194304", img, s.URI).want(t, exitOK)
			got, _ = os.ReadFile(img)
			sameBytes(t, "a copy between ranges apart", got[4<<20:], data[:4<<20])
		})
	}
}

// TestNBDServesLocalEndAcrossJobs: in a --jobs list, a job that reads or
// writes an export whose server holds a file open, and a later job that
// writes that file: one object, refused across the jobs as two paths of
// one file are, nothing written. The later job's DST is the file, which
// knows nothing of exports: the export's kind must be asked too.
func TestNBDServesLocalEndAcrossJobs(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	img, other := filepath.Join(dir, "s.img"), filepath.Join(dir, "other.img")
	randomFile(t, img, 1<<20, 82)
	randomFile(t, other, 1<<20, 83)
	s := nbdtest.Nbdkit(t, nbdtest.Unix, "file", img)
	out := filepath.Join(dir, "out")

	reads := writeList(t, dir, quoteWord(s.URI)+" "+out, other+" "+img)
	refused(t, []string{"--jobs", reads}, []string{img, other},
		"job 2 (line 2): "+img+": is job 1's SRC")
	mustNotExist(t, out)

	writes := writeList(t, dir, other+" "+quoteWord(s.URI), other+" "+img)
	refused(t, []string{"--jobs", writes}, []string{img, other},
		"job 2 (line 2): "+img+": is also job 1's DST")
}
