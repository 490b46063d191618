package copier

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Two new DSTs are one file when their names are: a batch refuses them
// (end.same), whatever the spelling of their folders, and in a folder
// that ignores case, whatever the case of their names.

// newFile names the file a new DST will be: its folder by device and
// inode, which every spelling of it shares (symbolic links, "..",
// relative paths, a bind mount of it elsewhere), its name, and whether
// that folder ignores case. A folder that cannot be looked at is named by
// its resolved path.
type newFile struct {
	folder, name string
	caseless     bool
}

func newFileOf(path string) newFile {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f := newFile{name: base}
	if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(fd)
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			f.folder = fmt.Sprintf("folder %d:%d", st.Dev, st.Ino)
			f.caseless = caseless(fd)
			return f
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f.folder = dir
	return f
}

// same: the two names make one file.
func (f newFile) same(g newFile) bool {
	return f.folder == g.folder && (f.name == g.name || f.caseless && strings.EqualFold(f.name, g.name))
}

// fsCasefold is FS_CASEFOLD_FL (linux/fs.h, not in x/sys): a folder of
// ext4 or f2fs (made with -O casefold) whose names ignore case.
const fsCasefold = 0x40000000

// caselessFilesystems ignore case in every folder: FAT, exFAT, NTFS (ntfs3)
// and SMB shares (statfs magic numbers).
var caselessFilesystems = map[int64]bool{0x4d44: true, 0x2011bab0: true, 0x7366746e: true, 0xff534d42: true, 0xfe534d42: true}

// caseless says whether the folder open as fd finds "A.img" under
// "a.img" (case-insensitive lookups). Unicode normalization, which ext4's
// casefolding also ignores, is not compared.
func caseless(fd int) bool {
	if flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil && flags&fsCasefold != 0 {
		return true
	}
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && caselessFilesystems[int64(uint32(fs.Type))]
}
