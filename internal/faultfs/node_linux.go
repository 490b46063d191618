package faultfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// rootNode is the mount's only directory. It mirrors the regular files of
// the backing directory; subdirectories, symlinks and devices there are not
// shown.
type rootNode struct {
	fusefs.Inode
	fsys *FS
}

var (
	_ fusefs.NodeGetattrer = (*rootNode)(nil)
	_ fusefs.NodeLookuper  = (*rootNode)(nil)
	_ fusefs.NodeReaddirer = (*rootNode)(nil)
	_ fusefs.NodeCreater   = (*rootNode)(nil)
	_ fusefs.NodeUnlinker  = (*rootNode)(nil)
	_ fusefs.NodeRenamer   = (*rootNode)(nil)
	_ fusefs.NodeStatfser  = (*rootNode)(nil)
)

func (r *rootNode) backing(name string) string {
	return filepath.Join(r.fsys.Backing, name)
}

// Getattr reports the backing directory's attributes.
func (r *rootNode) Getattr(ctx context.Context, f fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Stat(r.fsys.Backing, &st); err != nil {
		return fusefs.ToErrno(err)
	}
	out.FromStat(&st)
	return 0
}

// Lookup finds a regular backing file; anything else is ENOENT.
func (r *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	var st syscall.Stat_t
	if err := syscall.Lstat(r.backing(name), &st); err != nil {
		return nil, fusefs.ToErrno(err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, syscall.ENOENT
	}
	r.fsys.fillAttr(&out.Attr, &st, name)
	return r.newFile(ctx, &st), 0
}

// newFile returns the inode for a backing file. The backing inode number
// keeps one kernel inode per backing file, so a file looked up twice is
// the same file.
func (r *rootNode) newFile(ctx context.Context, st *syscall.Stat_t) *fusefs.Inode {
	return r.NewInode(ctx, &fileNode{fsys: r.fsys}, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: st.Ino})
}

// Readdir lists the regular backing files.
func (r *rootNode) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	ents, err := os.ReadDir(r.fsys.Backing)
	if err != nil {
		return nil, fusefs.ToErrno(err)
	}
	var list []fuse.DirEntry
	for _, e := range ents {
		if e.Type().IsRegular() {
			list = append(list, fuse.DirEntry{Name: e.Name(), Mode: syscall.S_IFREG})
		}
	}
	return fusefs.NewListDirStream(list), 0
}

// Create makes (or, without O_EXCL, opens) a backing file, so a copy's
// destination can be a new file in the mount.
func (r *rootNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	fd, err := unix.Open(r.backing(name), r.fsys.backingFlags(flags)|unix.O_CREAT, mode&07777)
	if err != nil {
		return nil, nil, 0, fusefs.ToErrno(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, 0, fusefs.ToErrno(err)
	}
	r.fsys.fillAttr(&out.Attr, &st, name)
	return r.newFile(ctx, &st), &handle{fsys: r.fsys, name: name, fd: fd}, r.fsys.openFlags(), 0
}

// Unlink removes a backing file.
func (r *rootNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return fusefs.ToErrno(unix.Unlink(r.backing(name)))
}

// Rename renames a backing file; flags (RENAME_NOREPLACE, RENAME_EXCHANGE)
// go to renameat2 as they came.
func (r *rootNode) Rename(ctx context.Context, name string, newParent fusefs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if _, ok := newParent.(*rootNode); !ok {
		return syscall.EXDEV
	}
	err := unix.Renameat2(unix.AT_FDCWD, r.backing(name), unix.AT_FDCWD, r.backing(newName), uint(flags))
	return fusefs.ToErrno(err)
}

// Statfs reports the backing file system's statistics.
func (r *rootNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var s syscall.Statfs_t
	if err := syscall.Statfs(r.fsys.Backing, &s); err != nil {
		return fusefs.ToErrno(err)
	}
	out.FromStatfsT(&s)
	return 0
}

// fileNode is one backing file. It holds no state of its own: its name is
// its entry in the root, and open files carry their own descriptor.
type fileNode struct {
	fusefs.Inode
	fsys *FS
}

var (
	_ fusefs.NodeGetattrer = (*fileNode)(nil)
	_ fusefs.NodeSetattrer = (*fileNode)(nil)
	_ fusefs.NodeOpener    = (*fileNode)(nil)
)

// name returns the file's current name, or "" once it has been unlinked.
func (n *fileNode) name() string {
	return n.Path(nil)
}

// backing returns the backing path, or ENOENT for an unlinked file (whose
// empty name would otherwise resolve to the backing directory itself).
func (n *fileNode) backing() (string, syscall.Errno) {
	name := n.name()
	if name == "" {
		return "", syscall.ENOENT
	}
	return filepath.Join(n.fsys.Backing, name), 0
}

// Getattr reports the backing file's attributes, through the open
// descriptor when there is one so an unlinked open file still has a size.
func (n *fileNode) Getattr(ctx context.Context, f fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if h, ok := f.(*handle); ok {
		if err := syscall.Fstat(h.fd, &st); err != nil {
			return fusefs.ToErrno(err)
		}
		n.fsys.fillAttr(&out.Attr, &st, h.name)
		return 0
	}
	p, errno := n.backing()
	if errno != 0 {
		return errno
	}
	if err := syscall.Lstat(p, &st); err != nil {
		return fusefs.ToErrno(err)
	}
	n.fsys.fillAttr(&out.Attr, &st, filepath.Base(p))
	return 0
}

// fillAttr reports the backing file's attributes as the file name's, with
// the size Options.Inflate claims for it.
func (fs *FS) fillAttr(out *fuse.Attr, st *syscall.Stat_t, name string) {
	out.FromStat(st)
	out.Size += uint64(fs.inflate[name])
}

// Open opens the backing file; see openFlags for what it answers the kernel.
func (n *fileNode) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	p, errno := n.backing()
	if errno != 0 {
		return nil, 0, errno
	}
	fd, err := unix.Open(p, n.fsys.backingFlags(flags), 0)
	if err != nil {
		return nil, 0, fusefs.ToErrno(err)
	}
	return &handle{fsys: n.fsys, name: filepath.Base(p), fd: fd}, n.fsys.openFlags(), 0
}

// Setattr applies size, mode, owner and times to the backing file. The
// size goes through the open descriptor when the kernel names one
// (ftruncate), so truncating an open, unlinked file works too.
func (n *fileNode) Setattr(ctx context.Context, f fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	h, _ := f.(*handle)
	if size, ok := in.GetSize(); ok {
		var err error
		if h != nil {
			err = unix.Ftruncate(h.fd, int64(size))
		} else if p, errno := n.backing(); errno != 0 {
			return errno
		} else {
			err = unix.Truncate(p, int64(size))
		}
		if err != nil {
			return fusefs.ToErrno(err)
		}
	}
	if errno := n.setMeta(in); errno != 0 {
		return errno
	}
	return n.Getattr(ctx, f, out)
}

// setMeta applies mode, owner and times by path: they are rare in a copy
// test and need no descriptor.
func (n *fileNode) setMeta(in *fuse.SetAttrIn) syscall.Errno {
	mode, modeOK := in.GetMode()
	uid, uidOK := in.GetUID()
	gid, gidOK := in.GetGID()
	mtime, mtimeOK := in.GetMTime()
	atime, atimeOK := in.GetATime()
	if !modeOK && !uidOK && !gidOK && !mtimeOK && !atimeOK {
		return 0
	}
	p, errno := n.backing()
	if errno != 0 {
		return errno
	}
	if modeOK {
		if err := unix.Chmod(p, mode); err != nil {
			return fusefs.ToErrno(err)
		}
	}
	if uidOK || gidOK {
		// GetUID and GetGID return -1 (as uint32) when unset, which
		// lchown leaves alone.
		if err := unix.Lchown(p, int(int32(uid)), int(int32(gid))); err != nil {
			return fusefs.ToErrno(err)
		}
	}
	if mtimeOK || atimeOK {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if atimeOK {
			ts[0] = unix.NsecToTimespec(atime.UnixNano())
		}
		if mtimeOK {
			ts[1] = unix.NsecToTimespec(mtime.UnixNano())
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fusefs.ToErrno(err)
		}
	}
	return 0
}
