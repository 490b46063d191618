package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/cmdtest"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// ddCase is one dd command line, run by GNU dd and by ringcp dd on the
// same SRC and on twin DSTs.
type ddCase struct {
	ops     string // operands besides if= and of=
	srcSize int64
	dstSize int64 // -1: DST does not exist
	zeros   bool  // SRC has a run of zeros in its middle
}

var ddCases = []ddCase{
	{"", 0, -1, false},
	{"", 1, -1, false},
	{"", 511, 4096, false},
	{"bs=4096", 4097, -1, false},
	{"bs=1M", 1<<20 + 3, 3 << 20, false},
	{"bs=1000", 1<<20 + 3, -1, false},
	{"bs=4096 count=3", 4097, -1, false},
	{"bs=4096 count=3", 65536, 100000, false},
	{"bs=4096 skip=1", 65536 + 7, -1, false},
	{"bs=4096 seek=2", 10000, -1, false},
	{"bs=4096 seek=2", 10000, 100000, false},
	{"bs=4096 seek=2 conv=notrunc", 10000, 100000, false},
	{"bs=4096 seek=30 conv=notrunc", 10000, 100000, false},
	{"bs=1M count=0 seek=1", 10000, 3 << 20, false},
	{"bs=4096 skip=100 seek=3", 10000, 100000, false},
	{"bs=4096 iflag=skip_bytes,count_bytes skip=100 count=5000", 65536, -1, false},
	{"bs=4096 oflag=seek_bytes seek=777", 65536, -1, false},
	{"bs=4096 oflag=seek_bytes seek=4873", 65536, 10000, false},
	{"bs=512 count=1KiB skip=2kB", 65536, -1, false},
	{"bs=4096 oflag=seek_bytes seek=777 conv=notrunc", 65536, 100000, false},
	{"bs=512 count=3B skip=10B", 4096, -1, false},
	{"ibs=1000 obs=3000", 100000, -1, false},
	{"ibs=4096 obs=512 count=5", 100000, 50000, false},
	{"bs=2x512 count=3", 100000, -1, false},
	{"bs=1kB count=5", 100000, -1, false},
	{"bs=1KiB count=5 skip=1", 100000, -1, false},
	{"bs=1K count=5", 100000, -1, false},
	{"bs=64k status=noxfer", 1 << 20, -1, false},
	{"bs=64k status=none", 1 << 20, -1, false},
	{"bs=4096 conv=sparse", 1 << 20, -1, true},
	{"bs=4096 conv=sparse seek=5", 1 << 20, 20000, true},
	{"bs=4096 conv=fsync", 4097, -1, false},
	{"bs=4096 conv=fdatasync,notrunc", 4097, 10000, false},
	{"bs=4096 iflag=direct oflag=direct", 1 << 20, -1, false},
	{"bs=1M oflag=sync,dsync iflag=fullblock", 3<<20 + 1, -1, false},
	{"bs=4096 conv=sync", 8192, -1, false},
	{"bs=4096 conv=excl", 8192, -1, false},
	{"bs=4096 conv=nocreat", 8192, 100, false},
	{"bs=1 count=100 skip=7 seek=3", 1000, 50, false},
}

// TestDDAgainstGNUdd runs each case through GNU dd and ringcp dd and
// compares DST byte for byte, its size, dd's records lines, and the
// transfer line up to its time (which differs by nature).
func TestDDAgainstGNUdd(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skipf("GNU dd is not installed (Debian: coreutils): %v", err)
	}
	for i, c := range ddCases {
		t.Run(fmt.Sprintf("%d %s size %d dst %d", i, c.ops, c.srcSize, c.dstSize), func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			ddSrc(t, src, c.srcSize, c.zeros)
			theirs, ours := filepath.Join(dir, "dst-dd"), filepath.Join(dir, "dst-ringcp")
			if c.dstSize >= 0 {
				randomFile(t, theirs, int(c.dstSize), 9)
				randomFile(t, ours, int(c.dstSize), 9)
			}
			compareDD(t, src, theirs, ours, strings.Fields(c.ops))
		})
	}
}

// TestDDBlockDevice: the same comparison onto a loop device, where nothing
// is truncated and seek= lands inside the device.
func TestDDBlockDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	for _, ops := range []string{"bs=4096 count=10 seek=3", "bs=64k skip=2 seek=1", "bs=1000 count=7 seek=5 conv=notrunc"} {
		t.Run(ops, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			ddSrc(t, src, 300000, false)
			a, fa := blocktest.Device(t, 1<<20)
			b, fb := blocktest.Device(t, 1<<20)
			randomFile(t, a, 1<<20, 5)
			randomFile(t, b, 1<<20, 5)
			compareDD(t, src, a, b, strings.Fields(ops))
			if !bytes.Equal(digestBytes(t, fa), digestBytes(t, fb)) {
				t.Error("the devices' backing files differ")
			}
		})
	}
}

func digestBytes(t *testing.T, path string) []byte {
	d := digest(t, path)
	return d[:]
}

func ddSrc(t *testing.T, path string, size int64, zeros bool) {
	t.Helper()
	b := randomFile(t, path, int(size), uint64(size)+1)
	if zeros && size > 3*65536 {
		clear(b[65536 : size-65536])
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareDD(t *testing.T, src, theirs, ours string, ops []string) {
	t.Helper()
	cmd := exec.Command("dd", append([]string{"if=" + src, "of=" + theirs}, ops...)...)
	var ddErr bytes.Buffer
	cmd.Stderr = &ddErr
	ddCode := 0
	if err := cmd.Run(); err != nil {
		t.Fatalf("GNU dd %s: %v\n%s", ops, err, ddErr.String())
	}
	r := cli(t, append([]string{"dd", "if=" + src, "of=" + ours}, ops...)...)
	if r.code != ddCode {
		t.Fatalf("ringcp dd exits %d, GNU dd %d:\n%s", r.code, ddCode, r.stderr)
	}
	a, errA := os.ReadFile(theirs)
	b, errB := os.ReadFile(ours)
	if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
		t.Fatalf("DSTs differ: GNU dd %d bytes (%v), ringcp %d bytes (%v)", len(a), errA, len(b), errB)
	}
	want, got := ddLines(ddErr.String(), "dd: "), ddLines(r.stderr, "ringcp dd: ")
	if len(want) != len(got) {
		t.Fatalf("GNU dd printed\n%s\nringcp dd printed\n%s", ddErr.String(), r.stderr)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("line %d: GNU dd %q, ringcp dd %q", i+1, want[i], got[i])
		}
	}
}

// ddLines are a dd's stderr lines with its name dropped and the transfer
// line cut before its time.
func ddLines(out, name string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimPrefix(l, name)
		if i := strings.Index(l, " copied, "); i >= 0 {
			l = l[:i+len(" copied,")]
		}
		lines = append(lines, l)
	}
	return lines
}

// TestDDRefuses: what ringcp cannot do the dd way is refused, exit 2, one
// line naming the operand, DST untouched.
func TestDDRefuses(t *testing.T) {
	cases := map[string]string{
		"conv=swab":                         "conv=swab: ringcp copies bytes as they are",
		"conv=noerror,sync":                 "conv=noerror: ringcp stops at the first read error",
		"conv=lcase":                        "conv=lcase",
		"conv=bogus":                        "conv=bogus: unknown conversion",
		"cbs=80":                            "cbs=80",
		"oflag=append":                      "oflag=append",
		"iflag=bogus":                       "iflag=bogus",
		"iflag=seek_bytes":                  "iflag=seek_bytes",
		"bs=0":                              "bs=0: invalid number",
		"bs=1m":                             "bs=1m: invalid number",
		"count=1Q":                          "count=1Q: invalid number",
		"seek=8 bs=1E":                      "seek=8: 8 records of 1152921504606846976 bytes are too many",
		"bs=3000 conv=sync":                 "conv=sync would pad the last 2536 bytes",
		"bs=4096 oflag=seek_bytes seek=777": "seek=777B, less than one output record (obs=4096), without conv=notrunc",
		"conv=excl":                         "conv=excl: DST exists",
		"conv=sparse,notrunc":               "conv=sparse with conv=notrunc",
		"status=loud":                       "status=loud",
		"bogus":                             `unrecognized operand "bogus"`,
		"skip=1 skip=2":                     "skip= given twice",
	}
	for ops, want := range cases {
		t.Run(ops, func(t *testing.T) {
			fx := newFixture(t)
			r := cli(t, append([]string{"dd", "if=" + fx.Src, "of=" + fx.Dst}, strings.Fields(ops)...)...)
			r.want(t, exitRefused, want)
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "ringcp dd: ") {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
			fx.Unchanged(t)
		})
	}
	// Without of=, dd writes stdout.
	r := cli(t, "dd", "if=/etc/hostname")
	r.want(t, exitOK, "records in")
	if want, _ := os.ReadFile("/etc/hostname"); r.stdout != string(want) {
		t.Fatalf("stdout %q, want /etc/hostname's %q", r.stdout, want)
	}
}

// TestDDSkipPastEnd: as GNU dd, a skip past SRC's end warns, copies
// nothing and cuts DST at seek.
func TestDDSkipPastEnd(t *testing.T) {
	fx := newFixture(t)
	r := cli(t, "dd", "if="+fx.Src, "of="+fx.Dst, "bs=4096", "skip=100", "seek=1")
	r.want(t, exitOK, "ringcp dd: "+fx.Src+": cannot skip to specified offset", "0+0 records in\n0+0 records out\n0 bytes copied, ")
	if fi, err := os.Stat(fx.Dst); err != nil || fi.Size() != 4096 {
		t.Fatalf("DST: %v %v, want 4096 bytes", fi, err)
	}
}

// TestDDImageReadsTheWholeGuest: ringcp dd reads a qcow2 SRC as its guest
// sees it, so its records run to the guest's end, not to the end of the
// image file: a sparse image's file (here 3 MiB of data in an 8 MiB
// guest, a file of a little over 3 MiB) made a truncated disk with exit
// 0, and skip= and count= past the file's size were cut there.
func TestDDImageReadsTheWholeGuest(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	img := filepath.Join(dir, "sparse.qcow2")
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", img, "8M")
	blocktest.Run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0x61 0 3M", "-c", "write -P 0x62 7M 64k", img)
	raw := filepath.Join(dir, "guest.raw")
	blocktest.Run(t, "qemu-img", "convert", "-q", "-f", "qcow2", "-O", "raw", img, raw)
	guest, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ops        string
		start, end int64
	}{
		{"bs=1M", 0, 8 << 20},
		{"bs=64k skip=100 count=20", 100 << 16, 120 << 16},
		{"bs=64k skip=64", 64 << 16, 8 << 20},
	} {
		out := filepath.Join(dir, "out.raw")
		os.Remove(out)
		args := append([]string{"dd", "if=" + img, "of=" + out, "status=none"}, strings.Fields(c.ops)...)
		cli(t, args...).want(t, exitOK)
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, guest[c.start:c.end]) {
			t.Errorf("dd %s: %d bytes, want the guest's bytes %d to %d", c.ops, len(got), c.start, c.end)
		}
	}
	// The image as standard input, a regular file: read alike.
	in, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out := filepath.Join(dir, "stdin.raw")
	cmd := exec.Command(cmdtest.Binary(t), "dd", "of="+out, "status=none")
	cmd.Stdin = in
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ringcp dd of=%s < %s: %v\n%s", out, img, err, b)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, guest) {
		t.Errorf("dd from standard input: %d bytes (%v), want the guest's %d", len(got), err, len(guest))
	}
}
