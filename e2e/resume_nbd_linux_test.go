package e2e

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// --resume into an NBD export: the state file (given with --state) names
// the export by its URI and size; a kill -9 at any point is resumed by
// the same command; another export, or the same URI serving another size,
// is refused.

// exportTarget is a raw image served writable by nbdkit's file plugin
// (FLUSH is its fdatasync), for kill tests. Not qemu-nbd: the
// connections of a client killed mid-request outlive it there for a
// while, and a few kills fill its --shared limit, after which it greets
// no one (ringcp then fails the handshake after its timeout, exit 2).
func exportTarget(t *testing.T) resumeTarget {
	img := filepath.Join(t.TempDir(), "dst.raw")
	randomFile(t, img, resumeSize+1<<20, 70)
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "file", img).URI
	state := filepath.Join(t.TempDir(), "state")
	return resumeTarget{dst: uri, state: state, device: true, export: true, reset: func(trial int) {
		os.Remove(state)
		fillExport(t, uri, enginetest.RandomBytes(resumeSize+1<<20, uint64(trial)+70))
	}}
}

// TestResumeIntoExportAfterKill: six kills at random points of a copy
// into an export, each resumed by the same command and compared.
func TestResumeIntoExportAfterKill(t *testing.T) {
	blocktest.NeedRoot(t) // --direct always on the temp dir
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src.img")
	data := randomFile(t, src, resumeSize, 43)
	tg := exportTarget(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 6 {
		t.Run(strconv.Itoa(trial), func(t *testing.T) { killAndResume(t, tg, "nbd", src, data, trial, rng) })
	}
}

// TestResumeIntoExportRefusesChanges: after an interrupted copy into an
// export, the same URI serving an image of another size, and another URI
// serving the same image, are refused (exit 2, the state kept); the
// export as it was then completes the copy.
func TestResumeIntoExportRefusesChanges(t *testing.T) {
	blocktest.NeedRoot(t)
	nbdtest.Need(t, "qemu-nbd")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	data := randomFile(t, src, resumeSize, 44)
	img, other := filepath.Join(dir, "dst.raw"), filepath.Join(dir, "other.raw")
	randomFile(t, img, resumeSize, 45)
	randomFile(t, other, resumeSize+1<<20, 46)
	sock, state := filepath.Join(dir, "nbd.sock"), filepath.Join(dir, "state")
	serve := func(image string) *nbdtest.Server {
		os.Remove(sock) // the last server's
		return nbdtest.StartAt(t, sock, "disk", "qemu-nbd", "--persistent", "--shared=8", "-f", "raw", "-x", "disk", image)
	}

	srv := serve(img)
	r := startResumable(t, state, "--state", state, src, srv.URI)
	r.waitFor(t, 1)
	for deadline := time.Now().Add(20 * time.Second); readState(t, state) <= 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	r.kill(t)
	srv.Stop()
	keepState := snap(t, state)

	srv = serve(other) // the same URI, another disk
	cli(t, "--resume", "--state", state, src, srv.URI).want(t, 2, "is not the DST the resume state records: its size was")
	srv.Stop()
	srv = nbdtest.QemuNBD(t, nbdtest.Unix, "raw", img) // the same disk, another URI
	cli(t, "--resume", "--state", state, src, srv.URI).want(t, 2, "is not the DST the resume state records: it was the NBD export")
	srv.Stop()
	keepState.Same(t)

	srv = serve(img)
	cli(t, "--resume", "--state", state, src, srv.URI).want(t, 0)
	if got := exportBytes(t, srv.URI); !bytes.Equal(got, data) {
		t.Fatal("the export is not SRC after the resumed copy")
	}
	mustNotExist(t, state)
}

// TestResumeCheckInterrupted: a rerun into an export compares what the
// earlier run copied before it writes (an export keeps no marks); a
// SIGINT during that compare (the server here answers each read after a
// second) ends it at once: exit 130, the export and the state as they
// were. A batch likewise.
func TestResumeCheckInterrupted(t *testing.T) {
	blocktest.NeedRoot(t)
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, img := filepath.Join(dir, "src.img"), filepath.Join(dir, "dst.raw")
	randomFile(t, src, resumeSize, 63)
	randomFile(t, img, resumeSize, 64)
	sock, state := filepath.Join(dir, "nbd.sock"), filepath.Join(dir, "state")
	serve := func(args ...string) *nbdtest.Server {
		os.Remove(sock)
		return nbdtest.StartAt(t, sock, "", append([]string{"nbdkit", "-f"}, args...)...)
	}
	srv := serve("file", img)
	killedAfter(t, state, 8<<20, "--state", state, src, srv.URI)
	srv.Stop()
	srv = serve("--filter=delay", "file", img, "delay-read=1")
	keepImg, keepState := snap(t, img), snap(t, state)
	list := filepath.Join(dir, "list")
	os.WriteFile(list, []byte(quoteWord(src)+" "+quoteWord(srv.URI)+" --state "+quoteWord(state)+"\n"), 0o644)
	for _, args := range [][]string{{"--state", state, src, srv.URI}, {"--jobs", list}} {
		cmd := exec.Command(binary(t), append([]string{"--resume", "--progress", "none"}, args...)...)
		r := signalAfter(t, cmd, 500*time.Millisecond, syscall.SIGINT)
		if r.code != exitInterrupted+int(syscall.SIGINT) || !strings.Contains(r.stderr, "interrupted while comparing the part an earlier run copied with SRC") || strings.Contains(r.stderr, "engine \n") {
			t.Errorf("ringcp --resume %v, SIGINT while it compares: exit %d, want 130 and the compare named:\n%s", args, r.code, r.stderr)
		}
		keepImg.Same(t)
		keepState.Same(t)
	}
}
