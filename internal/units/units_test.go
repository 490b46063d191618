package units

import (
	"errors"
	"strconv"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1": 1, "512": 512, "4k": 4096, "4K": 4096, "32M": 32 << 20, "1G": 1 << 30,
		"64MiB": 64 << 20, "8Mi": 8 << 20, "1GB": 1e9, "1kB": 1000, "2T": 2 << 40, "1P": 1 << 50,
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
		" 1": ErrSyntax, "1 ": ErrSyntax, "M": ErrSyntax, "1m": ErrSyntax, "0x10": ErrSyntax,
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

// FuzzParseSize: no input panics, and every accepted size round-trips
// through its plain decimal form.
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
		back, err := ParseSize(strconv.FormatInt(n, 10))
		if err != nil || back != n {
			t.Fatalf("%q -> %d -> %d, %v", s, n, back, err)
		}
	})
}
