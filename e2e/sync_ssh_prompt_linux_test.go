package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// TestSyncOverSSHPromptUnderTerminal: ringcp run from a terminal, its ssh
// reaching the host through a jump host whose key it does not know
// (ProxyJump: BatchMode on ssh's command line does not reach the jump's
// ssh, which asks "Are you sure you want to continue connecting?" on
// /dev/tty). ssh ran in a process group of its own, in the background
// of the terminal: the question stopped it (SIGTTOU, SIGTTIN) and the
// sync hung forever, saying nothing. Now ssh has no terminal at all: the
// question cannot be asked, ssh fails, and the sync says so at once.
func TestSyncOverSSHPromptUnderTerminal(t *testing.T) {
	blocktest.NeedTool(t, "script")
	s := newSSHSync(t)
	d := s.srv.Dir
	cfg := filepath.Join(d, "jump_config")
	common := fmt.Sprintf("  HostName 127.0.0.1\n  Port %d\n  User root\n  IdentityFile %s/id\n  IdentitiesOnly yes\n  IdentityAgent none\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n", s.srv.Port, d)
	body := "Host viajump\n" + common + fmt.Sprintf("  UserKnownHostsFile %s/known_hosts\n  StrictHostKeyChecking yes\n  ProxyJump jumphost\n", d) +
		"Host jumphost\n" + common + "  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking ask\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, src, synctest.Random(77, 1<<20))
	dst := filepath.Join(t.TempDir(), "dst")
	line := fmt.Sprintf("%s sync --ssh 'ssh -F %s' --remote-ringcp %s %s ssh://viajump%s", s.bin, cfg, s.bin, src, dst)
	cmd := exec.Command("script", "-qec", line, "/dev/null")
	stdin, keep, err := os.Pipe() // a terminal nobody types into, never at EOF
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), "ssh") {
			t.Fatalf("exit %v:\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		killTree(cmd.Process.Pid)
		<-done
		t.Fatalf("the sync hung for 60s on a question ssh asked on the terminal:\n%s", out.String())
	}
	mustNotExist(t, dst)
}

// killTree kills pid and every process below it (the ones this test
// started), deepest first.
func killTree(pid int) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		self, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], self)
		}
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			walk(c)
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
	walk(pid)
}
