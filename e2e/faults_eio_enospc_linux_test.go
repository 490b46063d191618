package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// Faults during the copy: exit 1, a message naming op, path, offset and
// errno, and a line saying what DST holds, which must be true.

const faultAt = 300000 // inside the third 128 KiB FUSE request

var (
	errorAt  = regexp.MustCompile(`ringcp: (read|write|fallocate) (\S+) at offset (\d+): `)
	keptLine = regexp.MustCompile(`ringcp: DST \S+ kept: it holds the first (\d+) bytes`)
)

// failedAt returns the op, path and offset of the error line on stderr.
func failedAt(t *testing.T, stderr string) (op, path string, off int64) {
	t.Helper()
	m := errorAt.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"ringcp: OP PATH at offset N: \" line on stderr:\n%s", stderr)
	}
	off, _ = strconv.ParseInt(m[3], 10, 64)
	return m[1], m[2], off
}

// keptBytes returns N from "DST ... kept: it holds the first N bytes".
func keptBytes(t *testing.T, stderr string) int64 {
	t.Helper()
	m := keptLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"DST ... kept: it holds the first N bytes\" line on stderr:\n%s", stderr)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// checkPrefix checks that the file at path is exactly src's first n bytes.
func checkPrefix(t *testing.T, path string, src []byte, n int64) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != n || n > int64(len(src)) || !bytes.Equal(got, src[:n]) {
		t.Errorf("DST is %d bytes; stderr says it holds SRC's first %d (equal: %v)",
			len(got), n, bytes.Equal(got, src[:min(int64(len(got)), int64(len(src)))]))
	}
}

// TestCLIEIO: EIO reading SRC or writing DST through faultfs, with the
// engines that may run on FUSE (auto picks the pool there). The exit code
// is 1; the message names op, path, offset, EIO. --engine uring on FUSE is
// refused before anything is written.
func TestCLIEIO(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultfs mounts with mount(2) here: needs root")
	}
	t.Run("uring-refused", func(t *testing.T) {
		back := t.TempDir()
		randomFile(t, filepath.Join(back, "src"), 1<<20, 3)
		randomFile(t, filepath.Join(back, "dst"), 2<<20, 4)
		fs := faultfs.Mount(t, back)
		refused(t, []string{"--engine", "uring", fs.Path("src"), fs.Path("dst")}, []string{filepath.Join(back, "dst")},
			"--engine uring: io_uring is not used on fuse")
	})
	for _, engine := range []string{"auto", "pool"} {
		for _, op := range []string{faultfs.OpRead, faultfs.OpWrite} {
			t.Run(engine+"/"+op, func(t *testing.T) { cliEIO(t, engine, op) })
		}
	}
}

func cliEIO(t *testing.T, engine, op string) {
	back := t.TempDir()
	src := randomFile(t, filepath.Join(back, "src"), 1<<20, 3)
	name := "src"
	if op == faultfs.OpWrite {
		name = "dst"
		randomFile(t, filepath.Join(back, "dst"), 2<<20, 4) // an existing DST: kept, cut
	}
	fs := faultfs.Mount(t, back, faultfs.Fault{Op: op, Offset: faultAt, Errno: syscall.EIO, Name: name})
	uringtest.NeedOn(t)
	r := cli(t, "--engine", engine, "-b", "64k", "-q", "4", fs.Path("src"), fs.Path("dst"))
	r.want(t, exitFailed, "input/output error (EIO)")
	gotOp, path, off := failedAt(t, r.stderr)
	if gotOp != op || path != fs.Path(name) || off > faultAt || off <= faultAt-faultfs.MaxRequest {
		t.Errorf("error: %s %s at %d; want %s %s in (%d, %d]", gotOp, path, off, op, fs.Path(name), faultAt-faultfs.MaxRequest, faultAt)
	}
	if op == faultfs.OpRead {
		r.want(t, exitFailed, "DST "+fs.Path("dst")+" discarded")
		mustNotExist(t, filepath.Join(back, "dst"))
		return
	}
	checkPrefix(t, filepath.Join(back, "dst"), src, keptBytes(t, r.stderr))
}

// smallExt4 mounts a 32 MiB ext4 made with extra mkfs options and returns
// the mount point and its free bytes.
func smallExt4(t *testing.T, opts ...string) (string, int64) {
	t.Helper()
	dev := blocktest.Loop(t, blocktest.SparseFile(t, 32<<20))
	blocktest.Mkfs(t, dev, "ext4", opts...)
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	return mnt, int64(st.Bfree) * st.Bsize
}

// TestENOSPC fills a small real ext4. With extents and every byte copied
// as data, preallocation finds the full file system before any data moves;
// with zero detection (the default) a reservation that finds no room is
// dropped, since zeros may never need it, and a write fails instead; so it
// does without extents (mkfs -O ^extent: no fallocate on such files).
// Either way: exit 1, "no space left on device" with the path and the
// offset, and DST discarded (new) or its true prefix kept (existing).
func TestENOSPC(t *testing.T) {
	t.Run("preallocate", func(t *testing.T) {
		mnt, free := smallExt4(t)
		src := filepath.Join(t.TempDir(), "src")
		randomFile(t, src, int(free+4<<20), 5)
		dst := filepath.Join(mnt, "dst")
		// --force: past the up-front room check, to the ENOSPC of a copy.
		r := cli(t, "--force", "--sparse", "never", src, dst)
		r.want(t, exitFailed, fmt.Sprintf("ringcp: fallocate %s at offset 0: no space left on device (ENOSPC)", dst),
			"DST "+dst+" discarded")
		mustNotExist(t, dst)

		r = cli(t, "--force", src, dst)
		r.want(t, exitFailed, "no space left on device (ENOSPC)", "DST "+dst+" discarded")
		if op, path, off := failedAt(t, r.stderr); op != "write" || path != dst || off <= 0 || off >= free+4<<20 {
			t.Errorf("error: %s %s at offset %d; want a write of %s in (0, %d)", op, path, off, dst, free+4<<20)
		}
		mustNotExist(t, dst)
	})
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprintf("write/existing=%v", existing), func(t *testing.T) {
			mnt, free := smallExt4(t, "-O", "^extent,^64bit")
			size := free + 4<<20
			srcPath := filepath.Join(t.TempDir(), "src")
			src := randomFile(t, srcPath, int(size), 6)
			dst := filepath.Join(mnt, "dst")
			if existing {
				randomFile(t, dst, 1<<20, 7)
			}
			r := cli(t, "--force", "-q", "4", srcPath, dst)
			r.want(t, exitFailed, "no space left on device (ENOSPC)")
			op, path, off := failedAt(t, r.stderr)
			if op != "write" || path != dst || off <= 0 || off >= size {
				t.Errorf("error: %s %s at offset %d; want a write of %s in (0, %d)", op, path, off, dst, size)
			}
			if !existing {
				r.want(t, exitFailed, "DST "+dst+" discarded")
				mustNotExist(t, dst)
				return
			}
			n := keptBytes(t, r.stderr)
			if n > off {
				t.Errorf("DST said to hold %d bytes, past the failed write at %d", n, off)
			}
			checkPrefix(t, dst, src, n)
		})
	}
}
