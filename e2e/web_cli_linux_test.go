package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/webtest"
)

// Process tests of the SRCs that are not local files: a URL copy killed
// with SIGKILL and resumed, stdin from a pipe (raw and compressed), the
// exit codes of --expect-checksum, of a damaged compressed SRC and of
// what a stream cannot do.

// TestURLResumeAfterKill: ringcp --resume from an nginx URL, killed with
// SIGKILL part-way, run again: it resumes and DST is SRC byte for byte;
// once the object changed, the rerun is refused (exit 2).
func TestURLResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "img"), filepath.Join(dir, "dst")
	data := randomFile(t, src, 24<<20+4097, 31)
	s := webtest.Nginx(t, dir, webtest.Config{})
	url := s.URL + "/img"
	state := copier.StatePath(dst)
	r := startResumableWith(t, state, urlResumeFlags, url, dst)
	waitRecorded(t, r, state, 5<<20)
	r.kill(t)
	// A rerun resumes from the recorded prefix rounded down to 4 MiB.
	ringcp(t, "--resume", url, dst).want(t, exitOK, "resumed: the first")
	if got := digest(t, dst); got != sha256.Sum256(data) {
		t.Fatal("DST differs from the URL's object after a kill and --resume")
	}
	// Killed again, then the object changes: refused.
	dst2 := filepath.Join(dir, "dst2")
	r = startResumableWith(t, copier.StatePath(dst2), urlResumeFlags, url, dst2)
	waitRecorded(t, r, copier.StatePath(dst2), 1)
	r.kill(t)
	randomFile(t, src, 24<<20+4097, 32)
	ringcp(t, "--resume", url, dst2).want(t, exitRefused, "changed")
}

// urlResumeFlags make a resumable copy from a URL slow enough to be
// killed part-way, with several barriers behind it.
var urlResumeFlags = []string{"--resume", "--sync-every", "200ms", "-q", "1", "-b", "64k", "--max-rate", "4M", "--progress", "always"}

// TestStdinPipe: `producer | ringcp - DST` for raw and gzip data, and
// what a stream cannot do.
func TestStdinPipe(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("ringcp stdin\x00\x00\x00"), 300_001)
	gz := filepath.Join(dir, "img.gz")
	cmd := exec.Command("gzip", "-c")
	cmd.Stdin = bytes.NewReader(data)
	packed, err := cmd.Output()
	if err != nil {
		t.Skipf("gzip: %v", err)
	}
	os.WriteFile(gz, packed, 0o644)
	for name, in := range map[string][]byte{"raw": data, "gzip": packed} {
		dst := filepath.Join(dir, "dst-"+name)
		c := exec.Command("sh", "-c", fmt.Sprintf("cat %s | %s - %s", shellQuote(gz), binary(t), shellQuote(dst)))
		if name == "raw" {
			c = exec.Command(binary(t), "-", dst)
			c.Stdin = bytes.NewReader(in)
		}
		res := runToEnd(t, c)
		res.want(t, exitOK)
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
			t.Fatalf("%s: DST differs from what was piped in", name)
		}
	}
	// What cannot work on a stream of unknown size: exit 2, one line.
	c := exec.Command(binary(t), "--verify", "-", filepath.Join(dir, "x"))
	c.Stdin = bytes.NewReader(data)
	res := runToEnd(t, c)
	res.want(t, exitRefused, "--size")
	if n := strings.Count(strings.TrimSpace(res.stderr), "\n"); n != 0 {
		t.Fatalf("a refusal of %d lines:\n%s", n+1, res.stderr)
	}
	mustNotExist(t, filepath.Join(dir, "x"))
}

// TestExpectChecksumExitCodes: a match exits 0, a mismatch 3 with no new
// DST, a bad value 2; a damaged compressed SRC exits 1.
func TestExpectChecksumExitCodes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomFile(t, src, 3<<20+5, 33)
	sum := fmt.Sprintf("sha256:%x", sha256.Sum256(data))
	ringcp(t, "--expect-checksum", sum, src, filepath.Join(dir, "a")).want(t, exitOK)
	ringcp(t, "--expect-checksum", "sha256:"+strings.Repeat("ab", 32), src, filepath.Join(dir, "b")).want(t, exitMismatch, "not the expected")
	mustNotExist(t, filepath.Join(dir, "b"))
	ringcp(t, "--expect-checksum", "crc:00", src, filepath.Join(dir, "c")).want(t, exitRefused, "--expect-checksum")
	cmd := exec.Command("xz", "-c")
	cmd.Stdin = bytes.NewReader(data)
	packed, err := cmd.Output()
	if err != nil {
		t.Skipf("xz: %v", err)
	}
	packed[len(packed)/2] ^= 1
	bad := filepath.Join(dir, "bad.xz")
	os.WriteFile(bad, packed, 0o644)
	ringcp(t, bad, filepath.Join(dir, "d")).want(t, exitFailed, "corrupt")
	mustNotExist(t, filepath.Join(dir, "d"))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
