package guard

import (
	"os"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/mountinfo"
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

// PseudoFS names the pseudo filesystem path is on (proc, sysfs, cgroup2,
// ...), or "": also when statfs fails, since the open for a copy then
// says what is wrong. A block device node is a disk wherever it lives:
// callers ask for files only.
func PseudoFS(path string) string {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	// f_type is a 32-bit magic in a long: compare it as such, so a magic
	// with the top bit set matches on 32-bit systems too.
	return pseudoFS[uint32(st.Type)]
}

// DevtmpfsMount returns where the devtmpfs that holds dir is mounted
// (/dev), or "" when dir is on another filesystem or cannot be looked at.
// A new regular file there is a mistyped device node: it would live in
// RAM under a disk's name.
func DevtmpfsMount(dir string) string {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return ""
	}
	data, err := os.ReadFile(procMountinfo)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "devtmpfs" {
			continue
		}
		if dev, err := sysblock.ParseNumber(f[2]); err == nil && dev == st.Dev {
			return mountinfo.Unescape(f[4])
		}
	}
	return ""
}
