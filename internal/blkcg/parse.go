package blkcg

import (
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/internal/mountinfo"
)

// parseV1 reads one of cgroup v1's blkio.throttle.*_device files: a line
// "MAJ:MIN VALUE" per disk that has a rule. Writing 0 removes a rule, so
// a listed value is never 0.
func parseV1(data, dev string) uint64 {
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == dev {
			v, _ := strconv.ParseUint(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// parseV2 reads cgroup v2's io.max: a line per disk that has a rule,
// "MAJ:MIN rbps=N wbps=max riops=max wiops=N", "max" meaning none.
func parseV2(data, dev string) Limit {
	var l Limit
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil { // "max", or a key this kernel added
				continue
			}
			switch k {
			case "rbps":
				l.ReadBPS = n
			case "wbps":
				l.WriteBPS = n
			case "riops":
				l.ReadIOPS = n
			case "wiops":
				l.WriteIOPS = n
			}
		}
	}
	return l
}

// cgroupPaths reads /proc/PID/cgroup: "ID:CONTROLLERS:PATH" per
// hierarchy. It returns the path of the v1 hierarchy that has blkio and
// that of the v2 hierarchy ("0::PATH"), "" where there is none.
func cgroupPaths(data string) (v1, v2 string) {
	for _, line := range strings.Split(data, "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
		case id == "0" && ctrls == "":
			v2 = path
		case hasWord(ctrls, "blkio"):
			v1 = path
		}
	}
	return v1, v2
}

// mount is a cgroup file system mounted somewhere.
type mount struct {
	point string // where it is mounted
	root  string // the cgroup mounted there ("/" unless bind-mounted or namespaced)
}

// cgroupMounts reads mountinfo for the v1 hierarchy that has blkio and
// for the v2 one. Fields: ID PARENT MAJ:MIN ROOT POINT OPTIONS
// [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS; paths escape spaces as \040.
func cgroupMounts(data string) (v1, v2 *mount) {
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		m := &mount{point: mountinfo.Unescape(f[4]), root: mountinfo.Unescape(f[3])}
		switch fstype := f[sep+1]; {
		case fstype == "cgroup2" && v2 == nil:
			v2 = m
		case fstype == "cgroup" && hasWord(f[sep+3], "blkio") && v1 == nil:
			v1 = m
		}
	}
	return v1, v2
}

func hasWord(list, word string) bool {
	for _, w := range strings.Split(list, ",") {
		if w == word {
			return true
		}
	}
	return false
}
