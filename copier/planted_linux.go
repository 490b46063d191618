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
	var link, dir unix.Stat_t
	if unix.Lstat(path, &link) != nil || link.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nil
	}
	folder := filepath.Dir(path)
	if unix.Stat(folder, &dir) != nil {
		return nil
	}
	shared := dir.Mode&unix.S_ISVTX != 0 && dir.Mode&0o002 != 0
	me := uint32(os.Geteuid())
	if !shared || link.Uid == me || link.Uid == dir.Uid {
		return nil
	}
	return refuse(KindPermission, path, fmt.Sprintf("is a symlink that uid %d put in the shared folder %s: it is not followed (as fs.protected_symlinks would not)", link.Uid, folder))
}
