package copier

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// StatePath is where a resumable copy to dst keeps its state by default:
// next to it, as DST.ringcp-state.
func StatePath(dst string) string { return dst + ".ringcp-state" }

// StateIn is the state file of a resumable copy to dst kept in the folder
// dir, as a batch keeps each job's (ringcp --jobs --state DIR): one file
// per DST, named after DST's path with its folder resolved (k2.img and
// /abs/k2.img are one DST, and one state), or after an export's URI,
// followed by a hash of that name, so that two DSTs never share a file.
// The last component is kept as given: /dev/disk/by-id/NAME stays the
// same disk's name after a reboot, where /dev/sdc may not.
func StateIn(dir, dst string) string {
	key := dst
	if !strings.Contains(dst, "://") {
		key = newFileKey(dst)
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	name := strings.Map(func(r rune) rune {
		if r == '/' || r < ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, strings.TrimPrefix(key, "/"))
	for len(name) > 200 { // a file name holds 255 bytes; the end says most
		_, n := utf8.DecodeRuneInString(name)
		name = name[n:]
	}
	return filepath.Join(dir, fmt.Sprintf("%s.%016x.ringcp-state", name, h.Sum64()))
}

// newFileKey names the file a path will be: its folder resolved
// (symbolic links, "..", relative paths) and its name as given. Two paths
// with one key name one file.
func newFileKey(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base)
}
