package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// Locks, with the real binary and real peers: qemu-nbd, qemu-io, qemu-img,
// flock(1), and a second ringcp. Every refusal exits 2 and leaves DST
// byte-identical with the same mtime.

// rawImage is a file of n random bytes with an mtime an hour ago, so that
// any write shows in it.
func rawImage(t *testing.T, name string, n int, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	randomFile(t, path, n, seed)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLockDstServedByQemuNbd: an image qemu-nbd serves, writable or
// read-only, is refused as DST, with --force too, naming qemu-nbd's pid.
func TestLockDstServedByQemuNbd(t *testing.T) {
	qemutest.Need(t, "qemu-nbd")
	src, _ := srcFile(t, 1<<20+3)
	for _, ro := range []bool{false, true} {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("readonly=%v/force=%v", ro, force), func(t *testing.T) {
				dst := rawImage(t, "vm.img", 4<<20, 21)
				var nbdArgs, args []string
				if ro {
					nbdArgs = []string{"-r"}
				}
				if force {
					args = []string{"--force"}
				}
				pid, _ := qemutest.NBD(t, dst, nbdArgs...)
				before := snap(t, dst)
				ringcp(t, append(args, src, dst)...).want(t, exitRefused,
					fmt.Sprintf("ringcp: %s: in use: qemu-nbd (pid %d) holds QEMU image locks on it; --force does not override a lock\n", dst, pid))
				before.Same(t)
			})
		}
	}
}

// TestLockSrcServedByQemuNbd: a SRC qemu-nbd serves read-only copies; one
// it serves writable is refused, and copied with --force, saying so.
func TestLockSrcServedByQemuNbd(t *testing.T) {
	qemutest.Need(t, "qemu-nbd")
	src := rawImage(t, "src.img", 3<<20+511, 22)
	qemutest.NBD(t, src, "-r")
	dst := filepath.Join(t.TempDir(), "dst")
	ringcp(t, src, dst).want(t, exitOK)
	if digest(t, dst) != digest(t, src) {
		t.Errorf("DST differs from SRC")
	}

	src2 := rawImage(t, "src2.img", 3<<20+511, 23)
	pid, _ := qemutest.NBD(t, src2)
	dst2 := filepath.Join(t.TempDir(), "dst")
	ringcp(t, src2, dst2).want(t, exitRefused,
		fmt.Sprintf("ringcp: %s: SRC is open for writing by qemu-nbd (pid %d): a copy would not be consistent; --force copies anyway\n", src2, pid))
	mustNotExist(t, dst2)
	ringcp(t, "--force", src2, dst2).want(t, exitOK,
		fmt.Sprintf("ringcp: --force: writing %s although SRC is open for writing by qemu-nbd (pid %d)", dst2, pid))
	if digest(t, dst2) != digest(t, src2) {
		t.Errorf("DST differs from SRC")
	}
}

// TestLockDuringCopy: while ringcp copies (held still with SIGSTOP as
// soon as it holds its locks, which stay held), QEMU reads SRC but cannot
// write or resize it, cannot open DST at all, flock(1) cannot lock DST,
// and a second ringcp onto DST is refused naming the first; the first then
// completes byte-exact.
func TestLockDuringCopy(t *testing.T) {
	qemutest.Need(t, "qemu-nbd", "qemu-io", "qemu-img", "flock")
	src := rawImage(t, "src.img", 32<<20, 24)
	dst := rawImage(t, "dst.img", 1<<20, 25)
	first := startLocked(t, src, dst)
	pid := first.pid()

	qemutest.Works(t, "qemu-img", "info", "-f", "raw", src)
	qemutest.Works(t, "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", src)
	qemutest.RefusesWith(t, `Failed to get "write" lock`, "qemu-io", "-f", "raw", "-c", "write 0 4k", src)
	qemutest.RefusesWith(t, "lock", "qemu-img", "resize", "-f", "raw", src, "1G")
	qemutest.NBDRefused(t, src)
	qemutest.RefusesWith(t, "lock", "qemu-io", "-f", "raw", "-c", "write 0 4k", dst)
	qemutest.RefusesWith(t, "lock", "qemu-io", "-r", "-f", "raw", "-c", "read 0 4k", dst)
	qemutest.NBDRefused(t, dst)
	qemutest.NBDRefused(t, dst, "-r")
	if err := exec.Command("flock", "-n", dst, "true").Run(); err == nil {
		t.Errorf("flock -n %s got the lock while ringcp copies onto it", dst)
	}
	held := fmt.Sprintf("ringcp: %s: in use: ringcp (pid %d) holds QEMU image locks on it; --force does not override a lock\n", dst, pid)
	other := rawImage(t, "other", 8192, 26)
	ringcp(t, other, dst).want(t, exitRefused, held)
	ringcp(t, "--force", other, dst).want(t, exitRefused, held)

	first.signal(t, syscall.SIGCONT)
	// 5 minutes: a loaded machine, not a speed limit.
	if r := first.waitUpTo(t, 5*time.Minute); r.code != exitOK {
		t.Fatalf("the first ringcp: exit %d\n%s", r.code, r.stderr)
	}
	if digest(t, dst) != digest(t, src) {
		t.Errorf("the first copy's DST differs from SRC")
	}
}

// startLocked starts ringcp SRC DST, one 4 KiB request at a time, and
// stops it (SIGSTOP) as soon as it holds DST's locks, which Run takes
// after SRC's and before it writes: /proc/locks shows its flock and QEMU's
// bytes 200-204 on DST. Prepare's own momentary flock probe is not enough.
func startLocked(t *testing.T, src, dst string) *proc {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dst, &st); err != nil {
		t.Fatal(err)
	}
	p := startRingcp(t, append(slowFlags(1, "always"), src, dst)...)
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	flock := []string{"FLOCK", "ADVISORY", "WRITE", strconv.Itoa(p.pid()), id, "0", "EOF"}
	qemu := []string{"OFDLCK", "ADVISORY", "READ", "-1", id, "200", "204"}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		if hasLockLine(string(b), flock) && hasLockLine(string(b), qemu) {
			p.signal(t, syscall.SIGSTOP)
			return p
		}
		if !p.running() {
			t.Fatalf("ringcp exited before it was seen holding its locks: %v\n%s", p.err, p.output())
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("ringcp did not lock %s within a minute:\n%s", dst, p.output())
	return nil
}

// hasLockLine says /proc/locks has a line with fields want after its
// number ("3: OFDLCK ADVISORY  READ -1 fe:00:12 200 204").
func hasLockLine(locks string, want []string) bool {
	for _, line := range strings.Split(locks, "\n") {
		f := strings.Fields(line)
		if len(f) == len(want)+1 && strings.Join(f[1:], " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}

// TestLockFlockedDst: a DST that another process holds with flock(1),
// shared or exclusive, is refused, with --force too, naming it.
func TestLockFlockedDst(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skipf("flock(1) is not installed (util-linux): %v", err)
	}
	src, _ := srcFile(t, 64<<10)
	for _, mode := range []string{"-s", "-x"} {
		t.Run(mode, func(t *testing.T) {
			dst := rawImage(t, "dst", 1<<20, 27)
			pid := flocked(t, dst, mode)
			before := snap(t, dst)
			want := fmt.Sprintf("ringcp: %s: in use: flock (pid %d) holds a flock(2) lock on it; --force does not override a lock\n", dst, pid)
			ringcp(t, src, dst).want(t, exitRefused, want)
			ringcp(t, "--force", src, dst).want(t, exitRefused, want)
			before.Same(t)
		})
	}
}

// flocked runs `flock MODE path sleep 60` in a process group of its own,
// killed with the group when the test ends, and returns once the lock is
// held.
func flocked(t *testing.T, path, mode string) int {
	t.Helper()
	cmd := exec.Command("flock", mode, path, "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < 400; i++ {
		// Held once an exclusive probe would wait.
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == unix.EWOULDBLOCK {
			return cmd.Process.Pid
		}
		if err == nil {
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("flock %s %s: no lock after 10 s", mode, path)
	return 0
}
