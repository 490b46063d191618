package units

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1": 1, "512": 512, "4k": 4096, "4K": 4096, "32M": 32 << 20, "1G": 1 << 30,
		"64MiB": 64 << 20, "4m": 4 << 20, "1g": 1 << 30, "2t": 2 << 40, "1p": 1 << 50, "8Mi": 8 << 20, "1GB": 1e9, "1kB": 1000, "2T": 2 << 40, "1P": 1 << 50,
		"4096B": 4096, "8191P": 8191 << 50,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]error{
		"": ErrSyntax, "-1": ErrSyntax, "+1": ErrSyntax, "1.5G": ErrSyntax, "12Q": ErrSyntax,
		" 1": ErrSyntax, "1 ": ErrSyntax, "M": ErrSyntax, "1mb": ErrSyntax, "1mib": ErrSyntax, "0x10": ErrSyntax,
		"1e3": ErrSyntax, "1GiBs": ErrSyntax, "99999999999P": ErrRange, "8192P": ErrRange,
		"99999999999999999999": ErrRange,
	}
	for in, want := range bad {
		if got, err := ParseSize(in); !errors.Is(err, want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %v", in, got, err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := map[int64]string{0: "0 B", 511: "511 B", 4096: "4.00 KiB", 1536 << 20: "1.50 GiB", 100 << 20: "100 MiB", 12 << 30: "12.0 GiB"}
	for n, want := range cases {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExact(t *testing.T) {
	cases := map[int64]string{0: "0", 1: "1", 511: "511", 1023: "1023", 1024: "1KiB", 4097: "4097",
		256 << 10: "256KiB", 1536 << 10: "1536KiB", 8 << 20: "8MiB", 64<<20 + 12345: "67121209",
		4 << 30: "4GiB", 3 << 40: "3TiB", 5 << 50: "5PiB", 8191 << 50: "8191PiB", 1 << 62: "4096PiB",
		math.MaxInt64: "9223372036854775807"}
	for n, want := range cases {
		if got := Exact(n); got != want {
			t.Errorf("Exact(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(Exact(n)); err != nil || back != n {
			t.Errorf("ParseSize(Exact(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestMBps(t *testing.T) {
	if got := MBps(3e6, 2); got != 1.5 {
		t.Errorf("MBps(3e6, 2) = %v, want 1.5", got)
	}
	if got := MBps(1, 0); got != 0 {
		t.Errorf("MBps(1, 0) = %v, want 0", got)
	}
	if got := Rate(3e6, 2); got != "1.5 MB/s" {
		t.Errorf("Rate(3e6, 2) = %q", got)
	}
}

// FuzzParseSize: no input panics, and every accepted size round-trips
// through its plain decimal form and through Exact.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "4k", "1.5G", "99999999999P", "-1", "64MiB", "1GB", "12Q", "8191P"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative", s, n)
		}
		for _, spelled := range []string{strconv.FormatInt(n, 10), Exact(n)} {
			back, err := ParseSize(spelled)
			if err != nil || back != n {
				t.Fatalf("%q -> %d -> %q -> %d, %v", s, n, spelled, back, err)
			}
		}
	})
}
