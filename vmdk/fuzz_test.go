package vmdk

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// memFile is an image in memory.
type memFile struct{ b []byte }

func (m *memFile) Name() string         { return "fuzz.vmdk" }
func (m *memFile) Size() (int64, error) { return int64(len(m.b)), nil }

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// FuzzOpen: whatever the bytes, Open and the reads that follow neither
// panic nor read outside the file; the seeds are images qemu-img made.
func FuzzOpen(f *testing.F) {
	if _, err := exec.LookPath("qemu-img"); err == nil {
		dir := f.TempDir()
		src := filepath.Join(dir, "src")
		b := make([]byte, 256<<10)
		for i := range b {
			b[i] = byte(i * 7 / 5)
		}
		os.WriteFile(src, b, 0o644)
		for _, sub := range []string{"monolithicSparse", "streamOptimized"} {
			img := filepath.Join(dir, sub+".vmdk")
			if exec.Command("qemu-img", "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat="+sub, src, img).Run() == nil {
				if seed, err := os.ReadFile(img); err == nil {
					f.Add(seed)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := Open(&memFile{b})
		if err != nil {
			return
		}
		p := make([]byte, 100<<10)
		for off := int64(0); off < min(im.Size(), 4<<20); off += int64(len(p)) {
			im.ReadAt(p, off)
			im.Data(off, im.Size())
		}
	})
}
