package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Faults on NBD ends during the copy, from real servers: exit 1, one line
// naming the op, the URI, the offset and the errno, and a true line on
// what DST holds; never a hang.

var nbdErrorAt = regexp.MustCompile(`ringcp: (read|write|write zeroes|flush) (\S+) at offset (\d+): (.*)`)

// nbdFailedAt returns the op, URI, offset and cause of the error line.
func nbdFailedAt(t *testing.T, stderr string) (op, uri string, off int64, cause string) {
	t.Helper()
	m := nbdErrorAt.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"ringcp: OP URI at offset N: \" line on stderr:\n%s", stderr)
	}
	off, _ = strconv.ParseInt(m[3], 10, 64)
	return m[1], m[2], off, m[4]
}

// TestNBDErrorFilter: nbdkit's error filter fails every write, or every
// zeroing, of the DST export (EIO, ENOSPC), or every read of the SRC
// export.
func TestNBDErrorFilter(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 4<<20, 1)
	sparse := filepath.Join(dir, "sparse")
	enginetest.MakeSparse(t, sparse, []enginetest.Piece{enginetest.DataPiece(1 << 20), enginetest.HolePiece(2 << 20),
		enginetest.DataPiece(1 << 20)}, 3)
	const bs = 1 << 20
	cases := []struct {
		name, src string
		filter    []string
		op, cause string
	}{
		{"write-EIO", src, []string{"error-pwrite-rate=100%", "error-pwrite=EIO"}, "write", "input/output error (EIO)"},
		{"write-ENOSPC", src, []string{"error-pwrite-rate=100%", "error-pwrite=ENOSPC"}, "write", "no space left on device (ENOSPC)"},
		{"zero-EIO", sparse, []string{"error-zero-rate=100%"}, "write zeroes", "input/output error (EIO)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := memory(t, nbdtest.Unix, 4<<20, append([]string{"--filter=error"}, c.filter...)...)
			r := cli(t, "--block-size", fmt.Sprint(bs), c.src, dst)
			r.want(t, exitFailed, "ringcp: DST "+dst+" holds the first ")
			op, uri, off, cause := nbdFailedAt(t, r.stderr)
			if op != c.op || uri != dst || off%bs != 0 || off >= 4<<20 || cause != c.cause {
				t.Errorf("error names %s %s at %d: %s; want %s %s at a block in the range: %s", op, uri, off, cause, c.op, dst, c.cause)
			}
		})
	}
	// A SRC whose reads all fail fails the first one, at its start, when
	// Run makes sure the server answers: refused, nothing written (an
	// existing DST file that the copy would cut keeps its bytes).
	t.Run("read-EIO", func(t *testing.T) {
		srcURI := memory(t, nbdtest.TCP, 4<<20, "--filter=error", "error-pread-rate=100%")
		out := filepath.Join(t.TempDir(), "out")
		randomFile(t, out, 1<<20, 7)
		before := snap(t, out)
		r := cli(t, "--block-size", fmt.Sprint(bs), srcURI, out)
		r.want(t, exitRefused, srcURI+": the NBD server failed a first read of the export: nbd read "+srcURI+" at offset 0 length 1: input/output error (EIO)")
		before.Same(t)
	})
}

// TestNBDExtentsError: a server that fails every block status request
// still gets a correct copy: everything is read as data.
func TestNBDExtentsError(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	want := sparseLayout(t, src)
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "--filter=error", "file", src, "error-extents-rate=100%").URI
	rep := jsonCopy(t, uri, out)
	if got := readRange(t, out, 0, int64(len(want))); string(got) != string(want) {
		t.Fatal("DST differs from SRC")
	}
	if num(t, rep, "bytes_read") != int64(len(want)) {
		t.Errorf("read %d bytes of %d: without block status everything is read", num(t, rep, "bytes_read"), len(want))
	}
}

// TestNBDFaultAtOffset: reads of the SRC export fail only where they cover
// a chosen offset (nbdkit's eval plugin serves zeros and fails there):
// the error names the read that covered it.
func TestNBDFaultAtOffset(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size, bs = 8 << 20, 1 << 20
	for _, at := range []int64{4096, 3<<20 + 1000, size - 1} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			pread := fmt.Sprintf(`if [ $4 -le %d ] && [ $(($4+$3)) -gt %d ]; then echo "EIO injected" >&2; exit 1; fi; dd if=/dev/zero bs=$3 count=1 status=none`, at, at)
			uri := nbdtest.Nbdkit(t, nbdtest.Unix, "eval", fmt.Sprint("get_size=echo ", size), "pread="+pread).URI
			out := filepath.Join(t.TempDir(), "out")
			r := cli(t, "--block-size", fmt.Sprint(bs), uri, out)
			r.want(t, exitFailed)
			op, got, off, cause := nbdFailedAt(t, r.stderr)
			if op != "read" || got != uri || off != at/bs*bs || cause != "input/output error (EIO)" {
				t.Errorf("error names %s %s at %d: %s; want the read of %s at %d: EIO", op, got, off, cause, uri, at/bs*bs)
			}
			mustNotExist(t, out)
		})
	}
}

// TestNBDFlushFails: the barrier's FLUSH fails: exit 1 naming the flush,
// and DST is not vouched for.
func TestNBDFlushFails(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 1<<20+3, 4)
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "eval", "get_size=echo 2097152", "pread=dd if=/dev/zero bs=$3 count=1 status=none",
		"pwrite=cat >/dev/null", `flush=echo "EIO the disk is gone" >&2; exit 1`).URI
	r := cli(t, src, uri)
	r.want(t, exitFailed, "cannot be vouched for")
	op, got, _, cause := nbdFailedAt(t, r.stderr)
	if op != "flush" || got != uri || cause != "input/output error (EIO)" {
		t.Errorf("error names %s %s: %s; want the flush of %s: EIO", op, got, cause, uri)
	}
}

// TestNBDTimeout: a server that stops answering (nbdkit's delay filter,
// far beyond --nbd-timeout) fails the copy within the timeout, naming the
// request, never hanging; in both directions.
func TestNBDTimeout(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 2<<20, 5)
	slowDst := memory(t, nbdtest.Unix, 2<<20, "--filter=delay", "delay-write=30")
	slowSrc := memory(t, nbdtest.TCP, 2<<20, "--filter=delay", "delay-read=30")
	for _, c := range []struct {
		from, to, op, uri string
		code              int
	}{
		{src, slowDst, "write", slowDst, exitFailed},
		// Run's first read of SRC, to make sure it answers, times out:
		// refused, nothing written.
		{slowSrc, filepath.Join(dir, "out"), "read", slowSrc, exitRefused},
	} {
		start := time.Now()
		r := cli(t, "--nbd-timeout", "1s", c.from, c.to)
		took := time.Since(start)
		r.want(t, c.code, "connection timed out (ETIMEDOUT)", c.op+" "+c.uri)
		if took > 20*time.Second {
			t.Errorf("took %v to fail with a 1 s timeout", took)
		}
	}
}

// TestNBDServerDies: the DST server is killed while the copy runs: exit
// 1, naming a write and the connection's end, without a hang.
func TestNBDServerDies(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 16<<20, 6)
	srv := nbdtest.Nbdkit(t, nbdtest.Unix, "--filter=delay", "memory", "16M", "delay-write=200ms")
	// 16 writes of 200 ms, two at a time: the copy writes for 1.6 s. The
	// kill lands in the middle, after Prepare, whose checks (the probe,
	// the scan for a server holding SRC open) took more than 500 ms on a
	// loaded machine.
	time.AfterFunc(time.Second, srv.Stop)
	start := time.Now()
	r := cli(t, "--block-size", "1M", "--queue-depth", "2", src, srv.URI)
	r.want(t, exitFailed)
	if op, uri, _, _ := nbdFailedAt(t, r.stderr); (op != "write" && op != "flush") || uri != srv.URI {
		t.Errorf("error names %s %s; want a write or the flush of %s", op, uri, srv.URI)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v to fail after the server died", took)
	}
}

// TestNBDSignal: SIGINT while a copy to a slow export runs (20 ms on each
// write): the writes in flight finish, a FLUSH makes them durable, exit
// 130, and the export's first bytes, as many as the message states, are
// SRC's.
func TestNBDSignal(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := slowSrc(t)
	dst := memory(t, nbdtest.Unix, slowSrcSize, "--filter=delay", "delay-write=20ms")
	s := startSlow(t, src, dst)
	s.signal(t, syscall.SIGINT)
	r := s.wait(t)
	interrupted(t, r, syscall.SIGINT, "SIGINT")
	r.want(t, 130, "written, flushed to DST (NBD FLUSH)") // an export is not fdatasync'ed
	n := heldPrefix(t, r.stderr)
	if n == 0 || !bytes.Equal(exportBytes(t, dst)[:n], readRange(t, src, 0, n)) {
		t.Errorf("the export's first %d bytes are not SRC's", n)
	}
}
