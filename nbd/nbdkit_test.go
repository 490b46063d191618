package nbd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nbdkit's memory plugin: reads and writes at awkward ranges in flight
// together, write zeroes with fast zero, trim, flush.
func TestNbdkitMemory(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			const size = 3<<20 + 4097 // nbdkit keeps odd sizes as they are
			c := dial(t, nbdkit(t, tr, "memory", strconv.Itoa(size)), Options{})
			in := c.Info()
			if in.Size != size || in.BlockSize.Advertised || in.BlockSize.Min != 1 || !in.CanFastZero() || !in.CanMultiConn() {
				t.Fatalf("info %+v", in)
			}
			want := make([]byte, size)
			writeSpans(t, c, want, disjoint(size))
			checkReads(t, c, want, awkward(size))
			if err := c.Zero(1<<20, 1<<20, FastZero|NoHole); err != nil {
				t.Fatal(err)
			}
			clear(want[1<<20 : 2<<20])
			if err := c.Trim(0, size); err != nil {
				t.Fatal(err)
			}
			clear(want) // the memory plugin's trim punches: reads give zeroes
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			checkReads(t, c, want, awkward(size))
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Submit(Request{Op: OpFlush}); !errors.Is(err, ErrClosed) || !errors.Is(err, syscall.EBADF) {
				t.Fatalf("Submit after Close: %v", err)
			}
		})
	}
}

// Several connections to an export that advertises CAN_MULTI_CONN share
// the requests; one flush covers them all, as a fresh connection sees.
// Without CAN_MULTI_CONN one connection is used and Info.Note says why;
// qemu-nbd advertises it read-only.
func TestMultiConn(t *testing.T) {
	const size = 16 << 20
	uri := nbdkit(t, overUnix, "memory", strconv.Itoa(size))
	c := dial(t, uri, Options{Connections: 4})
	if c.Info().Connections != 4 {
		t.Fatalf("connections %d, want 4 (note %q)", c.Info().Connections, c.Info().Note)
	}
	want := make([]byte, size)
	var spans []span
	for i := int64(0); i < 16; i++ {
		spans = append(spans, span{i<<20 + i, 1<<20 - 2*i})
	}
	writeSpans(t, c, want, spans)
	for i, cn := range c.connections() {
		cn.mu.Lock()
		used := cn.cookie
		cn.mu.Unlock()
		if used == 0 {
			t.Errorf("connection %d carried no request", i)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, dial(t, uri, Options{})); !bytes.Equal(got, want) {
		t.Fatalf("seen from a new connection: %s", firstDiff(got, want))
	}

	one := dial(t, nbdkit(t, overUnix, "--filter=multi-conn", "memory", "1M", "multi-conn-mode=disable"), Options{Connections: 3})
	if one.Info().Connections != 1 || one.Info().Note == "" {
		t.Fatalf("without CAN_MULTI_CONN: %d connections, note %q", one.Info().Connections, one.Info().Note)
	}
	img := writeFile(t, "raw.img", make([]byte, 1<<20))
	ro := dial(t, qemuNBD(t, overUnix, "raw", img, "--read-only"), Options{Connections: 3})
	if ro.Info().Connections != 3 || !ro.Info().ReadOnly() {
		t.Fatalf("qemu-nbd read-only: %+v", ro.Info())
	}
	if err := ro.Submit(Request{Op: OpWrite, Buf: []byte{1}}); !errors.Is(err, syscall.EPERM) {
		t.Fatalf("write to read-only: %v, want EPERM", err)
	}
}

// sparse-random: Extents covers the range exactly, agrees with libnbd's
// nbdinfo --map, every zero extent reads as zeroes and every data extent
// as non-zero bytes (the plugin fills data blocks with a non-zero byte).
// The plugin checks writes against its content: rewriting what was read
// succeeds, a wrong byte at a chosen offset fails with EIO and the
// connection goes on.
func TestNbdkitSparseRandom(t *testing.T) {
	needBin(t, "nbdinfo")
	const size = 64 << 20
	uri := nbdkit(t, overTCP, "sparse-random", strconv.Itoa(size), "seed=7", "percent=30", "runlength=524288")
	c := dial(t, uri, Options{})
	ext, err := c.Extents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := nbdinfoMap(t, uri); !equalExtents(ext, want) {
		t.Fatalf("extents:\n got %+v\nnbdinfo %+v", ext, want)
	}
	all := readAll(t, c)
	var data, zero int
	for _, e := range ext {
		b := all[e.Off : e.Off+e.Len]
		if e.Zero {
			zero++
			if i := bytes.IndexFunc(b, func(r rune) bool { return r != 0 }); i >= 0 {
				t.Fatalf("zero extent %+v has data at +%d", e, i)
			}
		} else {
			data++
			if i := bytes.IndexByte(b, 0); i >= 0 {
				t.Fatalf("data extent %+v has a zero byte at +%d", e, i)
			}
		}
	}
	if data == 0 || zero == 0 {
		t.Fatalf("%d data and %d zero extents: the test proves nothing", data, zero)
	}
	e := firstData(ext)
	if _, err := c.WriteAt(all[e.Off:e.Off+4096], e.Off); err != nil {
		t.Fatalf("rewrite of the same bytes: %v", err)
	}
	bad := append([]byte(nil), all[e.Off:e.Off+4096]...)
	bad[100]++
	if _, err := c.WriteAt(bad, e.Off); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write of different bytes: %v, want EIO", err)
	}
	checkReads(t, c, all, awkward(size)) // still usable
}

func firstData(ext []Extent) Extent {
	for _, e := range ext {
		if !e.Zero && e.Len >= 4096 {
			return e
		}
	}
	return Extent{}
}

// nbdinfoMap is libnbd's view of base:allocation, merged like ours.
func nbdinfoMap(t *testing.T, uri string) []Extent {
	t.Helper()
	out, err := exec.Command("nbdinfo", "--map", uri).Output()
	if err != nil {
		t.Fatalf("nbdinfo --map: %v", err)
	}
	var ext []Extent
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		off, _ := strconv.ParseInt(f[0], 10, 64)
		n, _ := strconv.ParseInt(f[1], 10, 64)
		flags, _ := strconv.Atoi(f[2])
		appendExtent(&ext, Extent{Off: off, Len: n, Hole: flags&stateHole != 0, Zero: flags&stateZero != 0})
	}
	return ext
}

// The error filter fails chosen ops while a trigger file exists: the
// requests fail with the errno in their completion, every one in flight
// completes, and the connection stays usable once the fault is gone.
func TestNbdkitErrorFilter(t *testing.T) {
	dir := t.TempDir()
	rfail, wfail, zfail := dir+"/rfail", dir+"/wfail", dir+"/zfail"
	c := dial(t, nbdkit(t, overUnix, "--filter=error", "memory", "4M",
		"error-pread=EIO", "error-pread-rate=100%", "error-pread-file="+rfail,
		"error-pwrite=ENOSPC", "error-pwrite-rate=100%", "error-pwrite-file="+wfail,
		"error-zero=EPERM", "error-zero-rate=100%", "error-zero-file="+zfail), Options{})
	want := make([]byte, 4<<20)
	writeSpans(t, c, want, disjoint(4<<20))

	touch(t, rfail)
	var reqs []Request
	for i := range 8 {
		reqs = append(reqs, Request{Op: OpRead, Off: int64(i) * 4096, Buf: make([]byte, 4096), Tag: uint64(i)})
	}
	for _, cp := range submitAll(t, c, reqs) {
		var e *Error
		if cp.Errno != syscall.EIO || !errors.Is(cp.Err, syscall.EIO) || !errors.As(cp.Err, &e) ||
			e.Op != "read" || e.Offset != int64(cp.Tag)*4096 || cp.N != 0 {
			t.Fatalf("read with the fault on: %+v", cp)
		}
	}
	os.Remove(rfail)
	checkReads(t, c, want, awkward(4<<20))

	touch(t, wfail)
	if _, err := c.WriteAt([]byte("x"), 5); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write with the fault on: %v, want ENOSPC", err)
	}
	touch(t, zfail)
	if err := c.Zero(0, 4096, 0); !errors.Is(err, syscall.EPERM) {
		t.Fatalf("zero with the fault on: %v, want EPERM", err)
	}
	os.Remove(wfail)
	os.Remove(zfail)
	writeSpans(t, c, want, []span{{3, 5000}})
	checkReads(t, c, want, awkward(4<<20))
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// With the delay filter every read takes 100ms on the server; 32 reads
// in flight together overlap there. The bound is a loose sanity margin
// (half the serial sum), not a speed claim.
func TestNbdkitDelayOverlap(t *testing.T) {
	c := dial(t, nbdkit(t, overUnix, "--filter=delay", "memory", "1M", "rdelay=100ms"), Options{})
	var reqs []Request
	for i := range 32 {
		reqs = append(reqs, Request{Op: OpRead, Off: int64(i) * 4096, Buf: make([]byte, 4096), Tag: uint64(i)})
	}
	start := time.Now()
	for _, cp := range submitAll(t, c, reqs) {
		if cp.Err != nil {
			t.Fatal(cp.Err)
		}
	}
	took := time.Since(start)
	if took < 100*time.Millisecond {
		t.Fatalf("32 delayed reads took %v: the delay filter did not act", took)
	}
	if serial := 32 * 100 * time.Millisecond; took > serial/2 {
		t.Fatalf("32 reads of 100ms took %v, no better than half of serial %v: requests did not overlap", took, serial)
	}
}

// The blocksize-policy filter advertises 4K/16K/64K and fails with EINVAL
// any request that breaks them: every request we send stays inside, long
// ones are split at 64K, unaligned helpers go through whole blocks, and
// an unaligned Submit is refused before it is sent.
func TestNbdkitBlocksizePolicy(t *testing.T) {
	const size = 2 << 20
	c := dial(t, nbdkit(t, overTCP, "--filter=blocksize-policy", "memory", strconv.Itoa(size),
		"blocksize-minimum=4096", "blocksize-preferred=16K", "blocksize-maximum=64K",
		"blocksize-error-policy=error"), Options{})
	if bs := c.Info().BlockSize; bs != (BlockSize{4096, 16384, 65536, true}) {
		t.Fatalf("block size %+v", bs)
	}
	// The filter does fail a request that breaks the policy.
	if errno := rawRequest(t, c, cmdRead, 1, 4096); errno != syscall.EINVAL {
		t.Fatalf("unaligned raw read: %v, want the filter's EINVAL", errno)
	}
	want := make([]byte, size)
	writeSpans(t, c, want, []span{{0, 1 << 20}, {1<<20 + 4096, 8192}}) // aligned, long
	for i, s := range disjoint(size) {
		b := random(uint64(300+i), s.n)
		copy(want[s.off:], b)
		if _, err := c.WriteAt(b, s.off); err != nil {
			t.Fatalf("WriteAt [%d,+%d): %v", s.off, s.n, err)
		}
	}
	if err := c.Zero(5, 100000, 0); err != nil {
		t.Fatal(err)
	}
	clear(want[5:100005])
	for _, s := range awkward(size) {
		b := make([]byte, s.n)
		if _, err := c.ReadAt(b, s.off); err != nil || !bytes.Equal(b, want[s.off:s.off+s.n]) {
			t.Fatalf("ReadAt [%d,+%d): %v", s.off, s.n, err)
		}
	}
	checkReads(t, c, want, []span{{0, size}})
	if _, err := c.Extents(1, size-2); err != nil {
		t.Fatal(err)
	}
	if err := c.Submit(Request{Op: OpRead, Off: 512, Buf: make([]byte, 4096)}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("unaligned Submit: %v, want EINVAL before sending", err)
	}
}

// rawRequest sends one request as given, past every check, and returns
// the server's errno.
func rawRequest(t *testing.T, c *Client, cmd uint16, off uint64, n uint32) syscall.Errno {
	t.Helper()
	ch := make(chan Completion, 1)
	o := &op{req: Request{Op: OpRead}, left: 1, private: ch}
	w := &wreq{cmd: cmd, off: off, length: n, buf: make([]byte, n), parent: o}
	if err := c.connections()[0].register(w); err != nil {
		t.Fatal(err)
	}
	return (<-ch).Errno
}

// Without WRITE_ZEROES (the nozero filter) Submit refuses OpZero, Zero
// writes zeroes instead, and FastZero fails with EOPNOTSUPP as a slow
// zero must.
func TestZeroWithoutWriteZeroes(t *testing.T) {
	c := dial(t, nbdkit(t, overUnix, "--filter=nozero", "pattern", "1M", "--filter=cow"), Options{})
	if c.Info().CanZero() {
		t.Fatalf("the nozero filter left WRITE_ZEROES on: %#x", c.Info().Flags)
	}
	if err := c.Submit(Request{Op: OpZero, Len: 512}); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Submit OpZero: %v, want EOPNOTSUPP", err)
	}
	if err := c.Zero(0, 4096, FastZero); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Zero with FastZero: %v, want EOPNOTSUPP", err)
	}
	want := readAll(t, c)
	if err := c.Zero(5, 100000, 0); err != nil {
		t.Fatal(err)
	}
	clear(want[5:100005])
	if got := readAll(t, c); !bytes.Equal(got, want) {
		t.Fatalf("after Zero by writes: %s", firstDiff(got, want))
	}
}

// Requests longer than one wire request (reads over the 32 MiB cap,
// write zeroes over 1 GiB) are split and complete once, with every byte
// counted.
func TestLongRequestsSplit(t *testing.T) {
	const size = 3<<30 + 4096
	c := dial(t, nbdkit(t, overUnix, "memory", strconv.Itoa(size)), Options{})
	want := random(11, 40<<20)
	reqs := []Request{
		{Op: OpWrite, Off: size - 40<<20, Buf: want, Tag: 1},
		{Op: OpZero, Off: 0, Len: size - 40<<20, Tag: 2},
	}
	for tag, cp := range submitAll(t, c, reqs) {
		if cp.Err != nil || cp.N != reqs[tag-1].length() {
			t.Fatalf("tag %d: n=%d err=%v", tag, cp.N, cp.Err)
		}
	}
	got := make([]byte, 40<<20)
	cp := submitAll(t, c, []Request{{Op: OpRead, Off: size - 40<<20, Buf: got, Tag: 3}})[3]
	if cp.Err != nil || cp.N != 40<<20 || !bytes.Equal(got, want) {
		t.Fatalf("40 MiB read: n=%d err=%v", cp.N, cp.Err)
	}
	cn := c.connections()[0]
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.cookie != 2+3+2 {
		t.Fatalf("%d wire requests, want 7: 2 for each 40 MiB read or write, 3 for ~3 GiB of zeroes", cn.cookie)
	}
}
