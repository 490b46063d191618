package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	command "github.com/ringcp/ringcp/cli"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// cliStdoutTo runs the real binary with its stdout appended to path, as
// `ringcp ... >> path` would; stderr is captured.
func cliStdoutTo(t *testing.T, path string, args ...string) result {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errOut bytes.Buffer
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout, cmd.Stderr = f, &errOut
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("ringcp %s >> %s -> %d\n%s", strings.Join(args, " "), path, code, errOut.String())
	return result{code: code, stderr: errOut.String()}
}

// TestSrcFormatRawCopiesImages: --src-format raw copies every kind of
// image ringcp otherwise refuses, byte for byte; LUKS, raw to qemu too,
// copies without it; a range that does not start at 0 is not looked at.
func TestSrcFormatRawCopiesImages(t *testing.T) {
	for _, kind := range []string{"qcow2", "qcow", "vmdk", "vmdk-flat", "vhdx", "vdi", "vpc", "vpc-fixed", "qed", "luks"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			img := qemutest.DiskImage(t, dir, kind)
			args := []string{"--src-format", "raw", img}
			if kind == "luks" {
				args = []string{"-v", img}
			}
			dst := filepath.Join(dir, "copy")
			r := cli(t, append(args, dst)...)
			r.want(t, exitOK)
			if kind == "luks" {
				r.want(t, exitOK, "SRC is a LUKS volume: copied as it is, still encrypted")
			}
			if digest(t, dst) != digest(t, img) {
				t.Errorf("%s: DST is not byte-identical to SRC", kind)
			}
		})
	}
	t.Run("range-not-at-0", func(t *testing.T) {
		dir := t.TempDir()
		img := qemutest.DiskImage(t, dir, "qcow2")
		dst := filepath.Join(dir, "copy")
		cli(t, "--src-offset", "512", "--length", "4096", img, dst).want(t, exitOK)
		if got := readRange(t, dst, 0, 4096); !bytes.Equal(got, readRange(t, img, 512, 4096)) {
			t.Error("DST does not hold bytes 512-4608 of SRC")
		}
	})
}

// TestRefuseOwnStderr: a DST that is ringcp's stderr is refused too. The
// refusal line itself then lands in DST (it is stderr), and nothing else:
// DST keeps its bytes, with that one line after them.
func TestRefuseOwnStderr(t *testing.T) {
	fx := newFixture(t)
	f, err := os.OpenFile(fx.Dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := os.ReadFile(fx.Dst)
	var out bytes.Buffer
	if code := command.Run([]string{fx.Src, fx.Dst}, &out, f); code != exitRefused {
		t.Errorf("exit %d, want %d", code, exitRefused)
	}
	after, _ := os.ReadFile(fx.Dst)
	line, ok := bytes.CutPrefix(after, before)
	want := "ringcp: " + fx.Dst + ": DST is ringcp's own stderr: the copy and ringcp's output would overwrite each other (redirect stderr elsewhere)\n"
	if !ok || string(line) != want {
		t.Errorf("DST changed beyond the refusal line: %d bytes before, %d after; added %q", len(before), len(after), line)
	}
}

// TestOwnStdoutByAnotherName: DST named /dev/stdout, or by a symlink to
// the file stdout goes to, is that same file: refused with exit 2, one
// line on stderr, nothing written (not even --json's object, which would
// land in DST).
func TestOwnStdoutByAnotherName(t *testing.T) {
	for _, name := range []string{"/dev/stdout", "alias"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			fx := newFixture(t)
			dst := name
			if name == "alias" {
				dst = filepath.Join(fx.Dir, "alias")
				if err := os.Symlink(fx.Dst, dst); err != nil {
					t.Fatal(err)
				}
			}
			r := cliStdoutTo(t, fx.Dst, "--json", fx.Src, dst)
			r.want(t, exitRefused, dst+": DST is ringcp's own stdout")
			singleLine(t, r)
			fx.Unchanged(t)
		})
	}
}
