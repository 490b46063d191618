package align

import "strconv"

// RoundUp returns the smallest multiple of a that is >= n.
// a must be positive (it panics otherwise: a zero or negative alignment
// is a bug in the caller, not a runtime condition); it need not be a
// power of two, because RAID stripes (optimal_io_size) often are not.
// n must be >= 0 and n+a must not overflow.
func RoundUp(n, a int64) int64 {
	mustPositive(a)
	if a&(a-1) == 0 {
		return (n + a - 1) &^ (a - 1)
	}
	return (n + a - 1) / a * a
}

// RoundDown returns the largest multiple of a that is <= n.
// a must be positive (it panics otherwise); n must be >= 0.
func RoundDown(n, a int64) int64 {
	mustPositive(a)
	if a&(a-1) == 0 {
		return n &^ (a - 1)
	}
	return n / a * a
}

// IsAligned reports whether n is a multiple of a.
// a must be positive (it panics otherwise).
func IsAligned(n, a int64) bool {
	mustPositive(a)
	if a&(a-1) == 0 {
		return n&(a-1) == 0
	}
	return n%a == 0
}

func mustPositive(a int64) {
	if a <= 0 {
		panic("align: alignment must be positive")
	}
}

// gcd returns the greatest common divisor of two positive numbers.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// LCM returns the least common multiple of two positive numbers.
// Dividing before multiplying keeps the intermediate small; the caller
// bounds the inputs (alignments and optimal I/O sizes are far below
// 2^31), so the product cannot overflow int64.
func LCM(a, b int64) int64 {
	return a / gcd(a, b) * b
}

// sizeString renders a byte count for humans: whole MiB and KiB get
// their unit, anything else stays in bytes so no precision is lost in
// a line that explains an alignment.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
