package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// diskImage makes a real disk image of one kind with qemu-img in dir and
// returns its path: qcow2, qcow, vmdk, vmdk-flat (a descriptor file and
// its flat extent), vhdx, vdi, vpc (dynamic VHD), vpc-fixed, qed, luks.
func diskImage(t *testing.T, dir, kind string) string {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	path := filepath.Join(dir, "img."+kind)
	format, args := kind, []string(nil)
	switch kind {
	case "vmdk-flat":
		format, args = "vmdk", []string{"-o", "subformat=monolithicFlat"}
	case "vpc-fixed":
		format, args = "vpc", []string{"-o", "subformat=fixed"}
	case "luks":
		// iter-time 100 ms: with less, a loaded machine makes QEMU's
		// PBKDF benchmark fail ("Unable to get accurate CPU usage").
		args = []string{"--object", "secret,id=sec0,data=ringcp-test", "-o", "key-secret=sec0,iter-time=100"}
	}
	cmd := append(append([]string{"create", "-q", "-f", format}, args...), path, "1M")
	var out []byte
	var err error
	for try := 0; try < 3; try++ { // the PBKDF benchmark can still miss under load
		if out, err = exec.Command("qemu-img", cmd...).CombinedOutput(); err == nil {
			return path
		}
	}
	t.Fatalf("qemu-img %s: %v\n%s", strings.Join(cmd, " "), err, out)
	return path
}

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
			img := diskImage(t, dir, kind)
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
		img := diskImage(t, dir, "vmdk")
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
	f, err := os.OpenFile(fx.dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := os.ReadFile(fx.dst)
	var out bytes.Buffer
	if code := run([]string{fx.src, fx.dst}, &out, f); code != exitRefused {
		t.Errorf("exit %d, want %d", code, exitRefused)
	}
	after, _ := os.ReadFile(fx.dst)
	line, ok := bytes.CutPrefix(after, before)
	want := "ringcp: " + fx.dst + ": DST is ringcp's own stderr: the copy and ringcp's output would overwrite each other (redirect stderr elsewhere)\n"
	if !ok || string(line) != want {
		t.Errorf("DST changed beyond the refusal line: %d bytes before, %d after; added %q", len(before), len(after), line)
	}
}

// TestOwnStdoutByAnotherName: DST named by a symlink to the file stdout
// goes to is the same file.
func TestOwnStdoutByAnotherName(t *testing.T) {
	fx := newFixture(t)
	alias := filepath.Join(fx.dir, "alias")
	if err := os.Symlink(fx.dst, alias); err != nil {
		t.Fatal(err)
	}
	r := cliStdoutTo(t, fx.dst, "--json", fx.src, alias)
	r.want(t, exitRefused, alias+": DST is ringcp's own stdout")
	fx.unchanged(t)
}
