package e2e

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/qemutest"
)

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
		img := qemutest.DiskImage(t, dir, "vmdk")
		dst := filepath.Join(dir, "copy")
		cli(t, "--src-offset", "512", "--length", "4096", img, dst).want(t, exitOK)
		if got := readRange(t, dst, 0, 4096); !bytes.Equal(got, readRange(t, img, 512, 4096)) {
			t.Error("DST does not hold bytes 512-4608 of SRC")
		}
	})
}
