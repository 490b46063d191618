// Package units parses and prints byte sizes the way storage admins write
// them: 512, 4k, 32M, 1G, 64MiB, 1GB. The CLI, the library's messages and
// the bench all read and print sizes and rates through it, so that a size
// means the same everywhere (K is 1024, KB is 1000) and every printed size
// is one of two spellings: Format for people, Exact for parsers.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Suffixes. Single letters and the -i forms are binary, as in dd's K/M/G
// and qemu-img's k/m/g (either case: 4m is 4 MiB, 1g 1 GiB, as people
// type them); two-letter -B forms are decimal, as in dd's kB/MB/GB.
var multipliers = map[string]int64{
	"": 1, "B": 1,
	"k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50,
	"m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
}

// ErrSyntax and ErrRange say what is wrong with a size.
var (
	ErrSyntax = errors.New("not a size (want digits and an optional suffix: k, M, G, T, P (either case), Ki/Mi/Gi, kB/MB/GB)")
	ErrRange  = errors.New("too large")
)

// ParseSize reads a non-negative whole number of bytes. Fractions ("1.5G"),
// signs, spaces and unknown suffixes are errors: a copy tool must not guess.
func ParseSize(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits, suffix := s[:i], s[i:]
	mult, ok := multipliers[suffix]
	if digits == "" || !ok {
		return 0, fmt.Errorf("%q: %w", s, ErrSyntax)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, ErrRange)
	}
	hi, lo := bits.Mul64(uint64(n), uint64(mult))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, fmt.Errorf("%q: %w", s, ErrRange)
	}
	return int64(lo), nil
}

// Format prints n bytes in binary units with three significant digits:
// "0 B", "511 B", "4.00 KiB", "1.50 GiB".
func Format(n int64) string {
	const units = "KMGTPE"
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	u := -1
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	prec := 2
	switch {
	case math.Abs(v) >= 100:
		prec = 0
	case math.Abs(v) >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + string(units[u]) + "iB"
}

// Exact spells n (non-negative) so that ParseSize reads it back: in the
// largest binary unit that divides it ("4GiB", "8MiB", "256KiB"), else in
// bytes ("12345"). No space, so it serves as a flag value or in a file
// name; Format is for amounts a person reads.
func Exact(n int64) string {
	const units = "KMGTP"
	u := -1
	for u < len(units)-1 && n != 0 && n%(1<<(10*(u+2))) == 0 {
		u++
	}
	if u < 0 {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n>>(10*(u+1)), 10) + string(units[u]) + "iB"
}

// MBps is bytes per second in decimal megabytes, the unit dd and fio
// print; 0 when no time passed.
func MBps(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) / seconds / 1e6
}

// Rate prints MBps with its unit, so numbers can be compared side by side
// with dd's and fio's.
func Rate(bytes int64, seconds float64) string {
	if seconds <= 0 {
		return "- MB/s"
	}
	return strconv.FormatFloat(MBps(bytes, seconds), 'f', 1, 64) + " MB/s"
}
