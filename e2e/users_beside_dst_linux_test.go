package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"
)

// TestBesideDstOfAnotherUser: the files ringcp keeps beside a DST (the
// resume state and its temporary, the partial file, the hidden temporary
// of a new DST) in a folder that another user may write to, as /tmp, with
// two real users. The attacker plants what it can there; the victim's
// copy must refuse before writing anything, and every file must keep its
// bytes. A DST that is the attacker's symlink, or a file the attacker
// made first, is refused as the kernel's fs.protected_symlinks and
// fs.protected_regular would refuse it (both off on this machine).
// Before the fix a state file the attacker wrote was trusted: the
// victim's --resume exited 0 without copying anything (DST kept its old
// bytes), or copied SRC into a partial file the attacker owned and could
// read.
func TestBesideDstOfAnotherUser(t *testing.T) {
	victim, attacker := makeUser(t, "ringcp-victim"), makeUser(t, "ringcp-attacker")
	tree := makeSharedTree(t, victim)
	const size = 1 << 20
	src := filepath.Join(tree.victim, "src")
	victimFile(t, victim, src, bytes.Repeat([]byte("SRC secret "), size/11+1)[:size])
	precious := filepath.Join(tree.victim, "precious")
	victimFile(t, victim, precious, []byte("the victim's own file\n"))
	old := bytes.Repeat([]byte{'o'}, size)
	for _, tc := range []struct {
		name, dst, says string
		plant           func(dst string)
		untouched       []string
	}{
		{"a forged state says all is done", "a.img", "belongs to uid", func(dst string) {
			victimFile(t, victim, dst, old)
			attacker.sh(t, `printf %s "$1" > "$2"`, forgedState(t, src, dst, dst, "", size), dst+".ringcp-state")
		}, []string{"a.img", "a.img.ringcp-state"}},
		{"a forged state points at the attacker's partial file", "b.img", "belongs to uid", func(dst string) {
			attacker.sh(t, `printf %s "$1" > "$2" && chmod 0666 "$2"`, "attacker's", dst+".ringcp-partial")
			attacker.sh(t, `printf %s "$1" > "$2"`, forgedState(t, src, dst, dst+".ringcp-partial", dst+".ringcp-partial", 0), dst+".ringcp-state")
		}, []string{"b.img.ringcp-partial", "b.img.ringcp-state"}},
		{"the partial file is the attacker's symlink", "c.img", "in the way", func(dst string) {
			attacker.sh(t, `ln -s "$1" "$2"`, precious, dst+".ringcp-partial")
		}, nil},
		{"DST is the attacker's symlink to a file of the victim's", "e.img", "is a symlink that uid", func(dst string) {
			attacker.sh(t, `ln -s "$1" "$2"`, precious, dst)
		}, nil},
		{"DST is a file the attacker made first, open to all", "f.img", "is a file that uid", func(dst string) {
			attacker.sh(t, `: > "$1" && chmod 0666 "$1"`, dst)
		}, []string{"f.img"}},
		{"the state's temporary is the attacker's symlink", "d.img", "cannot record the copy's progress", func(dst string) {
			victimFile(t, victim, dst, old)
			attacker.sh(t, `ln -s "$1" "$2"`, precious, dst+".ringcp-state.tmp")
		}, []string{"d.img"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(tree.tmp, tc.dst)
			tc.plant(dst)
			var before []snapshot
			for _, name := range append(tc.untouched, "../victim/precious") {
				before = append(before, snap(t, filepath.Join(tree.tmp, name)))
			}
			args := []string{"--progress", "none", src, dst}
			if tc.dst < "e" { // e.img, f.img: DST itself, in a plain copy
				args = append([]string{"--resume"}, args...)
			}
			victim.run(t, nil, tree.bin, args...).want(t, 2, tc.says)
			for _, s := range before {
				s.Same(t)
			}
		})
	}
}

// forgedState is the resume state an attacker writes for a copy of src
// to dst (target: the file DST is written as), saying the first done
// bytes are done, with the identities anyone who can stat the files can
// read.
func forgedState(t *testing.T, src, dst, target, partial string, done int64) string {
	t.Helper()
	var s, d syscall.Stat_t
	if err := syscall.Stat(src, &s); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(target, &d); err != nil {
		t.Fatal(err)
	}
	st := map[string]any{
		"format": "ringcp-resume-1",
		"src": map[string]any{"path": src, "kind": "file", "size": s.Size, "dev": s.Dev, "ino": s.Ino,
			"mtime_ns": s.Mtim.Nano(), "ctime_ns": s.Ctim.Nano()},
		"dst":        map[string]any{"path": dst, "kind": "file", "dev": d.Dev, "ino": d.Ino},
		"src_offset": 0, "dst_offset": 0, "length": s.Size, "block_size": 1 << 20, "done": done,
	}
	if partial != "" {
		st["partial"] = partial
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
