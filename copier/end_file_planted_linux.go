package copier

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// refusePlanted refuses an end named through a symlink that another user
// put in a shared sticky folder such as /tmp: the rule of the kernel's
// fs.protected_symlinks, which distributions turn on but a system may
// have off (this test machine has it off). There, a victim's `ringcp
// img /tmp/out.img` would overwrite whatever file of the victim's the
// attacker's /tmp/out.img points at. The kernel follows such a link only
// when the follower owns it or the folder's owner does; so does ringcp.
func refusePlanted(path string) *RefusedError {
	link, folder, ok := foreignInShared(path)
	if !ok || link.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nil
	}
	return refuse(KindPermission, path, fmt.Sprintf("is a symlink that uid %d put in the shared folder %s: it is not followed (as fs.protected_symlinks would not)", link.Uid, folder))
}

// refuseForeignDst refuses an existing regular file DST that another user
// made in a shared sticky folder: the rule of fs.protected_regular, which
// stops an O_CREAT open of it. A victim's `ringcp img /tmp/out.img`
// meant a new file; writing SRC into the attacker's /tmp/out.img, made
// first and left open to all, would hand SRC's bytes to the attacker.
func refuseForeignDst(path string) *RefusedError {
	file, folder, ok := foreignInShared(path)
	if !ok || file.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	return refuse(KindPermission, path, fmt.Sprintf("is a file that uid %d made in the shared folder %s: it is not overwritten (as fs.protected_regular would not let a create open it)", file.Uid, folder))
}

// foreignInShared stats path itself and says whether it belongs to
// neither this user nor its folder's owner, in a folder that is sticky
// and writable by all.
func foreignInShared(path string) (st unix.Stat_t, folder string, ok bool) {
	var dir unix.Stat_t
	folder = filepath.Dir(path)
	if unix.Lstat(path, &st) != nil || unix.Stat(folder, &dir) != nil {
		return st, folder, false
	}
	shared := dir.Mode&unix.S_ISVTX != 0 && dir.Mode&0o002 != 0
	me := uint32(os.Geteuid())
	return st, folder, shared && st.Uid != me && st.Uid != dir.Uid
}
