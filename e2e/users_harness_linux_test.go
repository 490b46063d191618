package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Tests of what another local user can do to a victim's ringcp run two
// real users: system accounts made with useradd for the test (removed
// after it), the victim running ringcp, the attacker planting folders,
// symlinks and files as itself. They need root to make the users and to
// start processes as them.

// testUser is a local user account a test runs processes as.
type testUser struct {
	name     string
	uid, gid uint32
}

// makeUser creates the system account name (no home, no login) unless it
// exists, and removes it at the test's end if the test made it.
func makeUser(t *testing.T, name string) testUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes two users and runs ringcp as one of them")
	}
	u, err := user.Lookup(name)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err != nil {
			t.Skipf("useradd %s (Debian: passwd): %v: %s", name, err, out)
		}
		t.Cleanup(func() { exec.Command("userdel", name).Run() })
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return testUser{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// command is name run as u, with only the environment given.
func (u testUser) command(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{}}}
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent"}, env...)
	return cmd
}

// sh runs a shell command as u and fails the test if it fails.
func (u testUser) sh(t *testing.T, script string, args ...string) {
	t.Helper()
	out, err := u.command(nil, "sh", append([]string{"-ec", script, "sh"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("as %s: sh -c %q %q: %v\n%s", u.name, script, args, err, out)
	}
}

// run runs ringcp (bin) as u and returns what it did.
func (u testUser) run(t *testing.T, env []string, bin string, args ...string) result {
	t.Helper()
	t.Logf("as %s:", u.name)
	return runToEnd(t, u.command(env, bin, args...))
}

// sharedTree is a folder both users reach: base (0755, root's), base/tmp
// (1777, like /tmp), base/bin/ringcp (the binary, 0755), and base/victim
// (the victim's own, 0700).
type sharedTree struct {
	base, tmp, bin, victim string
}

func makeSharedTree(t *testing.T, victim testUser) sharedTree {
	t.Helper()
	base, err := os.MkdirTemp("", "ringcp-users-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	s := sharedTree{base: base, tmp: filepath.Join(base, "tmp"), bin: filepath.Join(base, "bin", "ringcp"), victim: filepath.Join(base, "victim")}
	for dir, mode := range map[string]os.FileMode{base: 0o755, s.tmp: os.ModeSticky | 0o777, filepath.Dir(s.bin): 0o755, s.victim: 0o700} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(s.victim, int(victim.uid), int(victim.gid)); err != nil {
		t.Fatal(err)
	}
	copyFile(t, binary(t), s.bin, 0o755)
	return s
}

// victimFile writes data as a file of the victim's, at path.
func victimFile(t *testing.T, victim testUser, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, int(victim.uid), int(victim.gid)); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func (u testUser) String() string { return fmt.Sprintf("%s (uid %d)", u.name, u.uid) }
