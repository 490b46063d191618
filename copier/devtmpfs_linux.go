package copier

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// checkNewInDev refuses to create a regular file on devtmpfs. A DST there
// that does not exist is a mistyped device node (/dev/loop2p2 for
// /dev/loop2p1, a disk not plugged in yet): the copy would land in RAM as
// a file named like a disk, with exit 0. Options.Force creates it anyway.
func (p *Plan) checkNewInDev() error {
	if p.dst.exists {
		return nil
	}
	mnt := devtmpfsMount(filepath.Dir(p.dst.path))
	switch {
	case mnt == "":
		return nil
	case p.opts.Force:
		p.forced("it is a new file in " + mnt + " (devtmpfs), not a device")
		return nil
	}
	return refuse(p.dst.path, fmt.Sprintf("no such device; ringcp does not create files in %s, a devtmpfs (--force does)", mnt))
}

// devtmpfsMount returns where the devtmpfs that holds dir is mounted, or
// "" when dir is on another filesystem (or cannot be looked at).
func devtmpfsMount(dir string) string {
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
			return unescape(f[4])
		}
	}
	return ""
}

// forced records one more thing Options.Force overrode, for the line the
// command prints and for callers that log.
func (p *Plan) forced(why string) {
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += why
	p.note("--force: writing %s although %s", p.opts.Dst, why)
}
