package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memCgroup is a memory cgroup the bench made under its own, so that a
// tool's peak memory counts its page cache too: cgroup v1's memory
// controller (memory.max_usage_in_bytes) or v2's (memory.peak). renew
// makes it anew before each run, which resets the peak; remove takes it
// away at the end (its charges go to the parent).
type memCgroup struct {
	dir      string
	peakFile string
}

// newMemCgroup makes name under the memory cgroup this process is in.
func newMemCgroup(name string) (*memCgroup, error) {
	own, v2, err := ownMemoryCgroup()
	if err != nil {
		return nil, err
	}
	c := &memCgroup{dir: filepath.Join("/sys/fs/cgroup/memory", own, name), peakFile: "memory.max_usage_in_bytes"}
	if v2 {
		c = &memCgroup{dir: filepath.Join("/sys/fs/cgroup", own, name), peakFile: "memory.peak"}
	}
	return c, c.renew()
}

// ownMemoryCgroup is this process's memory cgroup path, and whether it
// is v2's.
func ownMemoryCgroup() (string, bool, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	v2 := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl == "memory" {
				return parts[2], false, nil
			}
		}
		if parts[0] == "0" {
			v2 = parts[2]
		}
	}
	if ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(ctl), "memory") {
		return v2, true, nil
	}
	return "", false, errors.New("no memory cgroup controller (neither v1's nor v2's)")
}

// renew removes the cgroup (when it is there) and makes it again.
func (c *memCgroup) renew() error {
	c.remove()
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	return nil
}

func (c *memCgroup) remove() { os.Remove(c.dir) }

// procs is the file a process writes its PID to, to join.
func (c *memCgroup) procs() string { return filepath.Join(c.dir, "cgroup.procs") }

// peak is the most memory the cgroup's processes held, page cache
// included, since renew.
func (c *memCgroup) peak() (int64, error) {
	raw, err := os.ReadFile(filepath.Join(c.dir, c.peakFile))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}
