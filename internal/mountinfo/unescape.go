// Package mountinfo reads what /proc/*/mountinfo and /proc/swaps write:
// one octal unescape for the guard, the cgroup reader and faultfs.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape undoes the octal escapes (\040 for a space) the kernel writes
// in mount points, sources and swap file names. What is not three octal
// digits of a byte stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
