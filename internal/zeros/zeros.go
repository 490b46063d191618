// Package zeros tells whether bytes are all zeros, at memory speed: one
// implementation for the engine's zero blocks, guard's room scan and the
// image checksum's zero blocks.
package zeros

import "bytes"

// page is compared against: bytes.Equal runs the runtime's memequal,
// which uses the widest vector unit the CPU has (AVX2 on x86-64) and stops
// at the first difference, so data costs almost nothing to scan.
var page = make([]byte, 64<<10)

// Is reports whether b is all zeros.
func Is(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(page))
		if !bytes.Equal(b[:n], page[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
