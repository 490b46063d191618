package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// errWrong marks a copy that finished but holds the wrong bytes or length;
// the report shows it as WRONG, never with a speed.
var errWrong = errors.New("wrong copy")

// verifyCopy checks that the first size bytes of dst are exactly c, and, when
// dst is a regular file, that it is exactly size bytes long (a copy with
// trailing garbage is wrong too). It reads with O_DIRECT where it can, so
// the check sees what reached the disk and leaves the page cache cold for
// the next run; tmpfs and friends fall back to buffered reads.
func verifyCopy(dst string, c Content, size int64) error {
	f, err := os.OpenFile(dst, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		f, err = os.Open(dst)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errWrong, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Mode().IsRegular() && st.Size() != size {
		return fmt.Errorf("%w: %s is %d bytes, want %d", errWrong, dst, st.Size(), size)
	}
	n := (size + chunkSize - 1) / chunkSize * chunkSize
	return forChunks(n, func(off int64, buf []byte) error {
		want := min(int64(len(buf)), size-off)
		got, err := f.ReadAt(buf, off)
		if int64(got) < want {
			if err == nil || err == io.EOF {
				return fmt.Errorf("%w: %s ends at %d, want %d bytes", errWrong, dst, off+int64(got), size)
			}
			return fmt.Errorf("read %s at %d: %w", dst, off, err)
		}
		// Compare in 64 KiB pieces so the expected bytes stay in cache.
		var exp [64 << 10]byte
		for p := int64(0); p < want; p += int64(len(exp)) {
			e := exp[:min(int64(len(exp)), want-p)]
			c.Fill(off+p, e)
			if g := buf[p : p+int64(len(e))]; !bytes.Equal(g, e) {
				at := off + p + int64(firstDiff(g, e))
				return fmt.Errorf("%w: %s differs from the source at byte %d", errWrong, dst, at)
			}
		}
		return nil
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
