package guard

import (
	"os"

	"github.com/ringcp/ringcp/internal/sysblock"
)

// LockNodes are the paths whose locks guard the bytes of s besides the
// node s was named by. QEMU locks the inode of the node it opened and does
// not open host devices with O_EXCL, so a disk it serves is protected only
// there: the same bytes are also reached through the device's /dev node
// when s names it another way (a container's /dev, mknod), through the
// disk of a partition, a partition of a disk, and the file or device
// behind a loop device. Paths that do not exist are left out.
func LockNodes(s Span) []string {
	seen := map[string]bool{s.Label: true}
	var out []string
	add := func(path string) {
		if path == "" || seen[path] {
			return
		}
		seen[path] = true
		if _, err := os.Stat(path); err == nil {
			out = append(out, path)
		}
	}
	for i, sp := range stack(s) {
		add(sp.Label)
		if !sp.Obj.Block {
			continue
		}
		d, err := sysblock.Lookup(sp.Obj.Rdev)
		if err != nil {
			continue
		}
		add(d.Node())
		if i == 0 && !d.IsPartition() {
			parts, _ := d.Partitions()
			for _, p := range parts {
				add(p.Node())
			}
		}
	}
	return out
}
