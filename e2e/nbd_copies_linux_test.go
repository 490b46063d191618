package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Copies through NBD with real servers: file to export, export to file,
// export to export, over a Unix socket and TCP loopback, at awkward
// sizes, each compared byte for byte.

var nbdSizes = []int64{0, 1, 511, 4097, 1<<20 + 3, 9<<20 + 12345}

func TestNBDCopies(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	for _, tr := range nbdtest.Transports {
		for _, size := range nbdSizes {
			t.Run(string(tr)+"/"+sizeArg(size), func(t *testing.T) { nbdCopies(t, tr, size) })
		}
	}
}

func nbdCopies(t *testing.T, tr nbdtest.Transport, size int64) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomFile(t, src, int(size), uint64(size))
	bs := []string{"--block-size", "65536"} // many chunks, and a tail
	if size > 8<<20 {
		bs = nil // the default 8 MiB blocks, split by the client
	}

	// file -> export: an export 4097 bytes larger keeps its tail.
	a := memory(t, tr, size+4097)
	tail := enginetest.RandomBytes(size+4097, 5)
	fillExport(t, a, tail)
	jsonCopy(t, append(bs, src, a)...)
	want := append(append([]byte{}, data...), tail[size:]...)
	sameBytes(t, "export after file->export", exportBytes(t, a), want)

	// export -> new file, the range given (the export is longer).
	out := filepath.Join(dir, "out")
	jsonCopy(t, append(bs, "--length", sizeArg(size), a, out)...)
	sameFile(t, "file after export->file", out, data)

	// export -> export, into the middle of a second one.
	b := memory(t, tr, 2*size+8192)
	rep := jsonCopy(t, append(bs, "--length", sizeArg(size), "--dst-offset", "8192", a, b)...)
	want = make([]byte, 2*size+8192)
	copy(want[8192:], data)
	sameBytes(t, "export after export->export", exportBytes(t, b), want)
	if !strings.Contains(rep["engine_detail"].(string), "over 4 connection(s)") {
		t.Errorf("engine detail %q: nbdkit's memory plugin allows several connections; want 4", rep["engine_detail"])
	}
}

// TestNBDWholeExport copies a whole export to a new file without --length
// (its size is the export's), and a file over a whole export of its size.
func TestNBDWholeExport(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size = 3<<20 + 1
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	data := randomFile(t, src, size, 9)
	a := memory(t, nbdtest.Unix, size)
	jsonCopy(t, src, a)
	jsonCopy(t, a, out)
	sameFile(t, "whole export copied to a file", out, data)
}

// TestNBDQemuNBD: qemu-nbd over raw files. A sparse SRC copied over old
// data: its holes are zeroed on the export (WRITE_ZEROES); the export
// (read-only) copied back to a new file: holes are mapped by block status
// and left as holes.
func TestNBDQemuNBD(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd")
	for _, tr := range nbdtest.Transports {
		t.Run(string(tr), func(t *testing.T) {
			dir := t.TempDir()
			src, img, out := filepath.Join(dir, "src"), filepath.Join(dir, "img"), filepath.Join(dir, "out")
			want := sparseLayout(t, src)
			size := int64(len(want))
			randomFile(t, img, int(size), 3) // old data to be replaced
			srv := nbdtest.QemuNBD(t, tr, "raw", img)
			rep := jsonCopy(t, src, srv.URI)
			if num(t, rep, "bytes_zeroed") < 4<<20 {
				t.Errorf("bytes zeroed %d: SRC's 4 MiB hole must be zeroed over the old data", num(t, rep, "bytes_zeroed"))
			}
			srv.Stop()
			sameFile(t, "image written through qemu-nbd", img, want)

			ro := nbdtest.QemuNBD(t, tr, "raw", img, "-r")
			rep = jsonCopy(t, ro.URI, out)
			if num(t, rep, "bytes_holes") < 4<<20 || num(t, rep, "bytes_read") > size-4<<20 {
				t.Errorf("holes %d, read %d: block status must map the 4 MiB hole, unread", num(t, rep, "bytes_holes"), num(t, rep, "bytes_read"))
			}
			sameFile(t, "file copied from qemu-nbd", out, want)
			if a, b := allocated(t, out), allocated(t, src); a > b+64<<10 {
				t.Errorf("DST allocates %d bytes, SRC %d: holes must stay holes", a, b)
			}
		})
	}
}

// sparseLayout writes a sparse file: data, a 4 MiB hole, written zeros,
// data with an odd end (a multiple of 512, as qemu-nbd rounds sizes).
func sparseLayout(t *testing.T, path string) []byte {
	t.Helper()
	return enginetest.MakeSparse(t, path, []enginetest.Piece{
		enginetest.DataPiece(1<<20 + 4096), enginetest.HolePiece(4 << 20),
		enginetest.ZerosPiece(1 << 20), enginetest.DataPiece(3*4096 + 512)}, 11)
}

// allocated is how many bytes of a file are allocated.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}
