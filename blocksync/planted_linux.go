package blocksync

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A sync's ends named in a folder all may write to, sticky (/tmp), are
// refused when another user put them there, as a copy refuses them
// (copier's refusePlanted and refuseForeignDst) and as the kernel's
// fs.protected_symlinks and fs.protected_regular would, where a system
// has them on: a symlink another user made (a victim's sync to
// /tmp/out.img would write whatever file of the victim's it points at),
// and an existing DST file another user made (opened without O_CREAT,
// which protected_regular does not cover: the victim's SRC would be
// handed to the attacker, who made the file readable).

// refusePlanted refuses path when it is a symlink that another user put
// in a shared sticky folder.
func refusePlanted(path string) error {
	link, folder, ok := foreignInShared(path)
	if !ok || link.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nil
	}
	return refuse(KindPermission, path, fmt.Sprintf("is a symlink that uid %d put in the shared folder %s: it is not followed (as fs.protected_symlinks would not)", link.Uid, folder), nil)
}

// refuseForeignDst refuses path when it is a regular file that another
// user made in a shared sticky folder.
func refuseForeignDst(path string) error {
	file, folder, ok := foreignInShared(path)
	if !ok || file.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	return refuse(KindPermission, path, fmt.Sprintf("is a file that uid %d made in the shared folder %s: it is not overwritten (as fs.protected_regular would not let a create open it)", file.Uid, folder), nil)
}

// foreignInShared lstats path and says whether it belongs to neither
// this user nor its folder's owner, in a folder that is sticky and
// writable by all.
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
