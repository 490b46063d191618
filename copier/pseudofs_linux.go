package copier

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// pseudoFS names the filesystems whose files are kernel interfaces, not
// stored bytes, by statfs f_type. Their sizes are made up (/proc/cpuinfo
// says 0, a sysfs attribute 4096), a read may have side effects, and a
// write changes the kernel (/proc/sys/vm/swappiness is a tunable): a copy
// from them is not the file, a copy onto them is not a copy.
var pseudoFS = map[uint32]string{
	unix.PROC_SUPER_MAGIC:     "proc",
	unix.SYSFS_MAGIC:          "sysfs",
	unix.DEBUGFS_MAGIC:        "debugfs",
	unix.TRACEFS_MAGIC:        "tracefs",
	unix.CGROUP_SUPER_MAGIC:   "cgroup",
	unix.CGROUP2_SUPER_MAGIC:  "cgroup2",
	0x62656570:                "configfs", // CONFIGFS_MAGIC, private to fs/configfs/mount.c
	unix.SECURITYFS_MAGIC:     "securityfs",
	unix.EFIVARFS_MAGIC:       "efivarfs",
	unix.BPF_FS_MAGIC:         "bpf",
	unix.PSTOREFS_MAGIC:       "pstore",
	unix.DEVPTS_SUPER_MAGIC:   "devpts",
	0x19800202:                "mqueue", // MQUEUE_MAGIC, private to ipc/mqueue.c
	unix.HUGETLBFS_MAGIC:      "hugetlbfs",
	unix.BINFMTFS_MAGIC:       "binfmt_misc",
	unix.SELINUX_MAGIC:        "selinuxfs",
	unix.SMACK_MAGIC:          "smackfs",
	0x5a3c69f0:                "apparmorfs", // AAFS_MAGIC
	unix.NSFS_MAGIC:           "nsfs",
	0x65735543:                "fusectl", // FUSE_CTL_SUPER_MAGIC, private to fs/fuse/control.c
	unix.RDTGROUP_SUPER_MAGIC: "resctrl",
	0x67596969:                "rpc_pipefs", // RPCAUTH_GSSMAGIC
	0x6e667364:                "nfsd",       // NFSD_MAGIC
	0xabba1974:                "xenfs",      // XENFS_SUPER_MAGIC
}

// checkPseudoFS refuses a SRC or DST (for a new DST: its folder) on a
// pseudo filesystem. A block device node is exempt: what it names is a
// disk wherever the node lives.
func (p *Plan) checkPseudoFS() error {
	if !p.src.isBlock {
		if fs := pseudoFSOf(p.src.path); fs != "" {
			return refuse(p.src.path, fmt.Sprintf("SRC is on %s, a pseudo filesystem: its files are kernel interfaces, not stored data, and their sizes are made up (read it with cat)", fs))
		}
	}
	if p.dst.isBlock {
		return nil
	}
	at, what := p.dst.path, "DST is"
	if !p.dst.exists {
		at = filepath.Dir(p.dst.path)
		what = "DST's folder " + at + " is"
	}
	if fs := pseudoFSOf(at); fs != "" {
		return refuse(p.dst.path, fmt.Sprintf("%s on %s, a pseudo filesystem: writing there changes the kernel, it stores no copy", what, fs))
	}
	return nil
}

// pseudoFSOf names the pseudo filesystem path is on, or "" (also when
// statfs fails: the open for the copy then says what is wrong).
func pseudoFSOf(path string) string {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	// f_type is a 32-bit magic in a long: compare it as such, so a magic
	// with the top bit set matches on 32-bit systems too.
	return pseudoFS[uint32(st.Type)]
}
