package untar

import (
	"fmt"
	"path"
	"strings"
)

// MemberError is a member the extraction refuses: its name, and why.
type MemberError struct {
	Name   string
	Reason string
}

func (e *MemberError) Error() string {
	return fmt.Sprintf("tar member %q: %s", e.Name, e.Reason)
}

// cleanName is a member's name as it is made beneath the directory:
// without a leading "/" (GNU tar drops it), cleaned, "" for the
// directory itself. A ".." element anywhere is refused: GNU tar refuses
// it too, and cleaned away ("a/../b") it would still say the archive
// meant to climb.
func cleanName(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", &MemberError{Name: name, Reason: "a name with a NUL byte"}
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", &MemberError{Name: name, Reason: `a name with a ".." element, which would reach outside the volume`}
		}
	}
	clean := path.Clean("/" + name)[1:]
	return clean, nil
}

// checkSymlink refuses a symbolic link named name (cleaned) whose target,
// read from the link's directory, is not beneath the directory the
// archive is extracted into: an absolute target, or one that climbs out
// with "..". What a link points at is read by whoever mounts the volume
// next (a VM, another pod), from where the volume is mounted there.
func checkSymlink(name, target string) error {
	switch {
	case target == "":
		return &MemberError{Name: name, Reason: "a symbolic link to nothing"}
	case strings.ContainsRune(target, 0):
		return &MemberError{Name: name, Reason: "a symbolic link target with a NUL byte"}
	case strings.HasPrefix(target, "/"):
		return &MemberError{Name: name, Reason: fmt.Sprintf("a symbolic link to the absolute path %q, outside the volume", target)}
	}
	// From the link's directory, a real one (made or opened without
	// following links): ".." elements may only lead the target, and no
	// more of them than that directory is deep. After a name, ".." could
	// climb out of whatever that name is a link to ("x/x/../.." with x a
	// link to "."), so it is refused there.
	depth := 0
	if dir := path.Dir("/" + name); dir != "/" {
		depth = strings.Count(dir, "/")
	}
	named := false
	for _, elem := range strings.Split(target, "/") {
		switch {
		case elem == "" || elem == ".":
		case elem == ".." && named:
			return &MemberError{Name: name, Reason: fmt.Sprintf("a symbolic link to %q, with \"..\" after a name, which may climb outside the volume", target)}
		case elem == "..":
			if depth--; depth < 0 {
				return &MemberError{Name: name, Reason: fmt.Sprintf("a symbolic link to %q, which climbs outside the volume", target)}
			}
		default:
			named = true
		}
	}
	return nil
}

// split is a cleaned name's directory elements and its last one.
func split(name string) (dirs []string, base string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return nil, name
	}
	return strings.Split(name[:i], "/"), name[i+1:]
}
