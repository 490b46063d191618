package podtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/cmdtest"
	"golang.org/x/sys/unix"
)

// volumes makes a block volume (a loop device) and a filesystem volume
// (ext4 on another, mounted) as a kubelet would hand them over.
func volumes(t *testing.T) (block, data string) {
	t.Helper()
	blocktest.NeedTool(t, "mkfs.ext4")
	block, _ = blocktest.Device(t, 8<<20)
	fsdev, _ := blocktest.Device(t, 64<<20)
	blocktest.Mkfs(t, fsdev, "ext4")
	return block, blocktest.Mount(t, fsdev, "ext4", 0)
}

func run(t *testing.T, p *Pod, script string) string {
	t.Helper()
	cmd, err := p.Command("/bin/sh", "-ec", script)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/usr/sbin", "IMPORTER_SOURCE=http"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in the pod: %v\n%s", err, out)
	}
	return string(out)
}

// TestPodWorld: inside, the volumes are where CDI puts them, as the same
// device and filesystem; the termination log lands in the host's file;
// outside, nothing changed.
func TestPodWorld(t *testing.T) {
	block, data := volumes(t)
	p := New(t)
	p.Block, p.Data, p.Scratch = block, data, t.TempDir()
	var bst, dst unix.Stat_t
	if err := unix.Stat(block, &bst); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(data, &dst); err != nil {
		t.Fatal(err)
	}
	out := run(t, p, `
		stat -c 'block %t:%T %F' /dev/cdi-block-volume
		stat -c 'data %d' /data
		stat -f -c 'datafs %T' /data
		echo "$IMPORTER_SOURCE" > /dev/termination-log
		echo x > /data/written
		test -d /scratch && test -c /dev/null && test -d /tmp && test -r /proc/self/mountinfo && test -d /sys/dev/block
		echo uid $(id -u)`)
	want := []string{
		fmt.Sprintf("block %x:%x block special file", unix.Major(bst.Rdev), unix.Minor(bst.Rdev)),
		fmt.Sprintf("data %d", dst.Dev), "datafs ext2/ext3", "uid 0",
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("the pod says\n%s\nwithout %q", out, w)
		}
	}
	if raw, _ := os.ReadFile(p.TerminationLog); string(raw) != "http\n" {
		t.Errorf("termination log on the host holds %q", raw)
	}
	if raw, _ := os.ReadFile(filepath.Join(data, "written")); string(raw) != "x\n" {
		t.Errorf("the data volume on the host holds %q", raw)
	}
	for _, host := range []string{"/dev/cdi-block-volume", "/dev/termination-log", "/data/written"} {
		if _, err := os.Lstat(host); err == nil && host != "/dev/termination-log" {
			t.Errorf("%s appeared on the host", host)
		}
	}
	assertNoPodMounts(t, p)
}

// TestPodAsQemuUser: as CDI's UID 107, the block node (owned by it, as a
// runtime with device_ownership_from_security_context makes it), the log
// and a volume owned by its group are writable, and nothing else of the
// host is.
func TestPodAsQemuUser(t *testing.T) {
	block, data := volumes(t)
	if err := os.Chown(data, 0, 107); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o775); err != nil {
		t.Fatal(err)
	}
	p := New(t)
	p.Block, p.Data, p.User = block, data, "107:107"
	out := run(t, p, `
		echo uid $(id -u) gid $(id -g)
		test -w /dev/cdi-block-volume && test -w /dev/termination-log && test -w /data && echo writable
		test ! -w /usr/bin && test ! -w /etc && echo rest read-only`)
	for _, w := range []string{"uid 107 gid 107", "writable", "rest read-only"} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("the pod says\n%s\nwithout %q", out, w)
		}
	}
}

// TestPodKilled: kill -9 of the pod's process (the importer itself: the
// PID is kept through unshare, sh and chroot) takes its namespace with
// it, and the volumes are free again.
func TestPodKilled(t *testing.T) {
	block, data := volumes(t)
	p := New(t)
	p.Block, p.Data = block, data
	cmd, err := p.Command("/usr/bin/sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
		if strings.HasSuffix(exe, "/sleep") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the pod's process is %q, never sleep", exe)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("wait: %v, want killed", err)
	}
	assertNoPodMounts(t, p)
	// The filesystem volume unmounts (blocktest's cleanup would fail on
	// a busy one): unmount it here to say so.
	fsdev := blockDevOf(t, data)
	if err := unix.Unmount(data, 0); err != nil {
		t.Fatalf("the data volume is still held: %v", err)
	}
	if err := unix.Mount(fsdev, data, "ext4", 0, ""); err != nil {
		t.Fatal(err) // for blocktest's cleanup, which unmounts it
	}
}

// blockDevOf finds the loop device mounted at dir from blocktest's record
// of it: the last mount there in our mount table.
func blockDevOf(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == dir {
			return f[0]
		}
	}
	t.Fatalf("nothing mounted at %s", dir)
	return ""
}

// assertNoPodMounts: no process on the machine sees the pod's root
// mounted any more.
func assertNoPodMounts(t *testing.T, p *Pod) {
	t.Helper()
	pids, _ := filepath.Glob("/proc/[0-9]*/mountinfo")
	for _, mi := range pids {
		raw, err := os.ReadFile(mi)
		if err == nil && strings.Contains(string(raw), " "+p.Root()+" ") {
			t.Errorf("%s still has the pod's root mounted", mi)
		}
	}
}

// TestPodRunsRingcp: ringcp itself runs in the pod (its checks read
// /proc and /sys there) and copies onto the block volume, byte for byte,
// as UID 107.
func TestPodRunsRingcp(t *testing.T) {
	block, _ := volumes(t)
	bin := cmdtest.Binary(t)
	want := make([]byte, 1<<20+4097)
	for i := range want {
		want[i] = byte(i*7 + i>>12)
	}
	src := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	// The test's temp dirs are 0700: let UID 107 through to the binary
	// and the image.
	for _, dir := range []string{filepath.Dir(bin), filepath.Dir(src), filepath.Dir(filepath.Dir(src))} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := New(t)
	p.Block, p.User = block, "107:107"
	cmd, err := p.Command(bin, src, "/dev/cdi-block-volume")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ringcp in the pod: %v\n%s", err, out)
	}
	got := make([]byte, len(want))
	f, err := os.Open(block)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the block volume does not hold the image")
	}
}
