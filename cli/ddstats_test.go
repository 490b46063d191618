package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// TestDDHuman: sizes and rates as GNU dd 9.1 printed them on this machine
// (see dd_test.go for the live comparison).
func TestDDHuman(t *testing.T) {
	sizes := map[int64][2]string{
		1: {"1 B", "1 B"}, 999: {"999 B", "999 B"}, 1000: {"1.0 kB", "1000 B"}, 1023: {"1.0 kB", "1023 B"},
		1024: {"1.0 kB", "1.0 KiB"}, 10000: {"10 kB", "9.8 KiB"}, 65536: {"66 kB", "64 KiB"},
		3000000000: {"3.0 GB", "2.8 GiB"}, 1073741824: {"1.1 GB", "1.0 GiB"}, 1048576: {"1.0 MB", "1.0 MiB"},
		999999: {"1.0 MB", "977 KiB"}, 9950: {"10 kB", "9.7 KiB"}, 9949: {"9.9 kB", "9.7 KiB"},
		999500: {"1.0 MB", "976 KiB"}, 99950: {"100 kB", "98 KiB"}, 1048575: {"1.0 MB", "1.0 MiB"},
	}
	for n, want := range sizes {
		if si, iec := humanReadable(n, 1, 1, false), humanReadable(n, 1, 1, true); si != want[0] || iec != want[1] {
			t.Errorf("%d: %q %q, want %q %q", n, si, iec, want[0], want[1])
		}
	}
	rates := []struct {
		n       int64
		elapsed time.Duration
		want    string
	}{
		{1, 45398 * time.Nanosecond, "1 byte copied, 4.5398e-05 s, 22.0 kB/s"},
		{5, 79187 * time.Nanosecond, "5 bytes copied, 7.9187e-05 s, 63.1 kB/s"},
		{999, 73239 * time.Nanosecond, "999 bytes copied, 7.3239e-05 s, 13.6 MB/s"},
		{1000, 1466860 * time.Nanosecond, "1000 bytes (1.0 kB) copied, 0.00146686 s, 682 kB/s"},
		{10000, 87450 * time.Nanosecond, "10000 bytes (10 kB, 9.8 KiB) copied, 8.745e-05 s, 114 MB/s"},
		{3000000000, 2438620 * time.Microsecond, "3000000000 bytes (3.0 GB, 2.8 GiB) copied, 2.43862 s, 1.2 GB/s"},
		{0, 43985 * time.Nanosecond, "0 bytes copied, 4.3985e-05 s, 0.0 kB/s"},
		{1073741824, 145894 * time.Millisecond, "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 145.894 s, 7.4 MB/s"},
		{5, 0, "5 bytes copied, 0 s, Infinity B/s"},
	}
	for _, r := range rates {
		if got := ddXfer(r.n, r.elapsed, false); got != r.want {
			t.Errorf("ddXfer(%d, %v)\n got %q\nwant %q", r.n, r.elapsed, got, r.want)
		}
	}
	if got := ddXfer(1261568, 1000314*time.Microsecond, true); got != "1261568 bytes (1.3 MB, 1.2 MiB) copied, 1 s, 1.3 MB/s" {
		t.Errorf("progress form: %q", got)
	}
}

// TestDDNumber: dd's number syntax, and which forms count bytes.
func TestDDNumber(t *testing.T) {
	good := map[string]struct {
		n       int64
		inBytes bool
	}{
		"0": {0, false}, "7": {7, false}, "1c": {1, false}, "3w": {6, false}, "1b": {512, false},
		"1k": {1024, false}, "1K": {1024, false}, "1kB": {1000, true}, "1KB": {1000, true}, "1KiB": {1024, true},
		"4M": {4 << 20, false}, "4MB": {4e6, true}, "2G": {2 << 30, false}, "1E": {1 << 60, false},
		"2x512": {1024, false}, "3B": {3, true}, "2x1KiB": {2048, true}, "1x2x3": {6, false},
	}
	for in, want := range good {
		n, b, err := ddNumber(in)
		if err != nil || n != want.n || b != want.inBytes {
			t.Errorf("ddNumber(%q) = %d, %v, %v; want %d, %v", in, n, b, err, want.n, want.inBytes)
		}
	}
	for _, in := range []string{"", "m", "1m", "1g", "1kiB", "1Q", "-1", "1.5K", "1xx2", "8E", "99999999999999999999", "1Bx"} {
		if n, _, err := ddNumber(in); err == nil {
			t.Errorf("ddNumber(%q) = %d, want an error", in, n)
		}
	}
}

func TestCG(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 1: "1", 0.5: "0.5", 4.5398e-05: "4.5398e-05", 0.00146686: "0.00146686",
		2.43862: "2.43862", 145.894: "145.894", 1234567: "1.23457e+06", 100000: "100000", 0.0001: "0.0001", 123.4567891: "123.457"} {
		if got := cG(x); got != want {
			t.Errorf("cG(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestDDEndDiscarded: a copy whose new DST was discarded (it failed: SRC
// changed while it was read, a write error) printed dd's lines for all
// it had written, "8388608 bytes (8.4 MB, 8.0 MiB) copied", after the
// line that said DST was discarded. dd counts what went out to a DST
// that stays: none did. The records read are still said, as dd says
// them after a failure.
func TestDDEndDiscarded(t *testing.T) {
	a := ddArgs{ibs: 512, obs: 512}
	var b strings.Builder
	ddEnd(&b, a, copier.Report{Bytes: 8 << 20, DstState: copier.DstDiscarded}, time.Second)
	want := "16384+0 records in\n0+0 records out\n0 bytes copied, 1 s, 0 B/s\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
	b.Reset()
	ddEnd(&b, a, copier.Report{Bytes: 8 << 20, DstState: copier.DstMixed}, time.Second)
	if !strings.Contains(b.String(), "16384+0 records out\n8388608 bytes (8.4 MB, 8.0 MiB) copied") {
		t.Errorf("an existing DST holds what was written: got\n%s", b.String())
	}
}
