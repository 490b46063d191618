package blkcg_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blkcg"
	"github.com/ringcp/ringcp/internal/blkcg/cgtest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// TestRealV1: real blkio cgroups, a parent and a child with throttle
// limits on a loop device, and a process in the child: Lookup through its
// /proc finds the least limit of each kind, from the files the kernel
// keeps (the kernel rewrites them in its own format).
func TestRealV1(t *testing.T) {
	dev, _ := blocktest.Device(t, 64<<20)
	parent := cgtest.New(t, nil)
	child := cgtest.New(t, parent)
	parent.Throttle("write_bps_device", dev, 50<<20)
	child.Throttle("write_bps_device", dev, 100<<20)
	child.Throttle("read_bps_device", dev, 10<<20)
	child.Throttle("write_iops_device", dev, 250)
	cmd := child.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	s := blkcg.Sys{Proc: fmt.Sprintf("/proc/%d", cmd.Process.Pid)}
	var l blkcg.Limit
	var err error
	// The shell moves itself into the group, then execs sleep.
	for range 100 {
		if l, err = s.Lookup(st.Rdev); err != nil || l.Any() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if l.WriteBPS != 50<<20 || l.ReadBPS != 10<<20 || l.WriteIOPS != 250 || l.ReadIOPS != 0 {
		t.Errorf("got %+v", l)
	}
	if len(l.Files) != 4 || !strings.HasPrefix(l.Files[0], child.Dir) || filepath.Dir(l.Files[3]) != parent.Dir {
		t.Errorf("files %v", l.Files)
	}
	if own, err := blkcg.Self.Lookup(st.Rdev); err != nil || own.Any() {
		t.Errorf("this process, outside the group: %+v, %v", own, err)
	}
}
