package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What `ringcp dd` prints, in GNU dd's words (coreutils 9 dd.c
// print_stats and print_xfer_stats, gnulib human_readable), so that a
// script that reads dd's records or bytes lines reads ringcp's.

// ddRecords are dd's records lines for in bytes read in ibs records and
// out bytes written in obs records: whole records, then "+1" for a short
// last one. ringcp reads files and devices whole, so only the last can
// be short.
func ddRecords(in, out, ibs, obs int64) string {
	return fmt.Sprintf("%d+%d records in\n%d+%d records out\n", in/ibs, b2i(in%ibs != 0), out/obs, b2i(out%obs != 0))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ddXfer is dd's transfer line, without its newline: "1048576 bytes
// (1.0 MB, 1.0 MiB) copied, 0.00123 s, 852 MB/s". progress is the form
// status=progress redraws: whole seconds.
func ddXfer(n int64, elapsed time.Duration, progress bool) string {
	si := humanReadable(n, 1, 1, false)
	iec := humanReadable(n, 1, 1, true)
	rate := "Infinity B/s"
	if elapsed > 0 {
		rate = humanReadable(n, 1e9, elapsed.Nanoseconds(), false) + "/s"
	}
	secs := cG(elapsed.Seconds()) + " s"
	if progress {
		secs = strconv.FormatFloat(elapsed.Seconds(), 'f', 0, 64) + " s"
	}
	switch {
	case lacksPrefix(si) && n == 1:
		return fmt.Sprintf("%d byte copied, %s, %s", n, secs, rate)
	case lacksPrefix(si):
		return fmt.Sprintf("%d bytes copied, %s, %s", n, secs, rate)
	case lacksPrefix(iec):
		return fmt.Sprintf("%d bytes (%s) copied, %s, %s", n, si, secs, rate)
	}
	return fmt.Sprintf("%d bytes (%s, %s) copied, %s, %s", n, si, iec, secs, rate)
}

// lacksPrefix: "999 B" has no unit prefix (dd's abbreviation_lacks_prefix).
func lacksPrefix(s string) bool { return len(s) >= 2 && s[len(s)-2] == ' ' }

// cG is C's printf("%g"): six significant digits, trailing zeros dropped,
// an exponent below 1e-4 or from 1e6.
func cG(x float64) string {
	if x == 0 {
		return "0"
	}
	s := strconv.FormatFloat(x, 'e', 5, 64) // d.ddddde±XX
	mant, expPart, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expPart)
	if exp < -4 || exp >= 6 {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	f := strconv.FormatFloat(x, 'f', 5-exp, 64)
	if strings.Contains(f, ".") {
		f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
	}
	return f
}

// humanReadable is gnulib's human_readable as dd calls it: n*from/to
// bytes, autoscaled, rounded to nearest, SI units with a space and a B
// ("1.0 kB", "9.8 KiB", "114 MB"); base 1024 gives KiB, MiB...
func humanReadable(n, from, to int64, base1024 bool) string {
	base := int64(1000)
	if base1024 {
		base = 1024
	}
	var num string
	var exp int
	switch {
	case to <= from && from%to == 0 && n <= (1<<62)/(from/to):
		num, exp = humanInt(n*(from/to), 0, 0, base)
	case to > from && to%from == 0:
		d := to / from
		r10 := (n % d) * 10
		r2 := (r10 % d) * 2
		rounding := b2i(0 < r2)
		if r2 >= d {
			rounding = 2 + b2i(d < r2)
		}
		num, exp = humanInt(n/d, int(r10/d), rounding, base)
	default:
		num, exp = humanFloat(float64(n)*(float64(from)/float64(to)), base, base1024)
	}
	unit := " "
	if exp > 0 {
		if !base1024 && exp == 1 {
			unit += "k"
		} else {
			unit += string(" KMGTPEZYRQ"[exp])
		}
		if base1024 {
			unit += "i"
		}
	}
	return num + unit + "B"
}

// humanInt is human_readable's exact integer arithmetic: amt and tenths,
// with rounding 0 (exact), 1 (below .05), 2 (exactly .05), 3 (above).
func humanInt(amt int64, tenths, rounding int, base int64) (string, int) {
	exp := 0
	frac := ""
	if base <= amt {
		for {
			r10 := int((amt%base)*10) + tenths
			r2 := (r10%int(base))*2 + (rounding >> 1)
			amt /= base
			tenths = r10 / int(base)
			if r2 < int(base) {
				rounding = b2i(r2+rounding != 0)
			} else {
				rounding = 2 + b2i(int(base) < r2+rounding)
			}
			exp++
			if amt < base || exp >= 10 {
				break
			}
		}
		if amt < 10 {
			if 2 < rounding+(tenths&1) {
				tenths++
				rounding = 0
				if tenths == 10 {
					amt++
					tenths = 0
				}
			}
			if amt < 10 {
				frac = "." + strconv.Itoa(tenths)
				tenths, rounding = 0, 0
			}
		}
	}
	if 5 < tenths+b2i(0 < rounding+int(amt&1)) {
		amt++
		if exp > 0 && amt == base && exp < 10 {
			exp++
			frac = ".0"
			amt = 1
		}
	}
	return strconv.FormatInt(amt, 10) + frac, exp
}

// humanFloat is human_readable's floating point path (a rate): one
// decimal, dropped when the number is too long for it.
func humanFloat(damt float64, base int64, base1024 bool) (string, int) {
	e, exp := 1.0, 0
	for {
		e *= float64(base)
		exp++
		if !(e*float64(base) <= damt && exp < 10) {
			break
		}
	}
	damt /= e
	s := strconv.FormatFloat(damt, 'f', 1, 64)
	limit := 1 + 2 + b2i(!base1024)
	if limit < len(s) {
		s = strconv.FormatFloat(damt, 'f', 0, 64)
	}
	return s, exp
}
