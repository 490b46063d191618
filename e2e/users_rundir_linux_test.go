package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunDirOfAnotherUser: a non-root user without XDG_RUNTIME_DIR keeps
// its control files in TMPDIR/ringcp-UID, a name any local user can take
// first (issue 20). As two real users: the attacker makes that folder (or
// a symlink there to a folder of its own, or finds it open to all) and
// plants a symlink named like the control file's temporary, pointing at a
// file of the victim's; the victim's copy and `ringcp rate` must refuse
// the folder and leave the file as it was. Before the fix `ringcp rate`
// wrote the control file through the symlink: the victim's file held
// "start ... max_rate ..." afterwards.
func TestRunDirOfAnotherUser(t *testing.T) {
	victim, attacker := makeUser(t, "ringcp-victim"), makeUser(t, "ringcp-attacker")
	tree := makeSharedTree(t, victim)
	precious := filepath.Join(tree.victim, "precious")
	want := []byte("the victim's own file\n")
	victimFile(t, victim, precious, want)
	src := filepath.Join(tree.victim, "src")
	victimFile(t, victim, src, bytes.Repeat([]byte{7}, 16<<20))
	env := []string{"TMPDIR=" + tree.tmp}
	runDir := filepath.Join(tree.tmp, fmt.Sprintf("ringcp-%d", victim.uid))
	attackerDir := filepath.Join(tree.tmp, "attacker")

	t.Run("own", func(t *testing.T) {
		// The folder the victim makes itself works, and is its alone.
		cp := startAs(t, victim, env, tree.bin, src, filepath.Join(tree.victim, "dst-own"))
		waitUntil(t, func() bool { _, err := os.Stat(filepath.Join(runDir, controlName(cp.pid()))); return err == nil })
		victim.run(t, env, tree.bin, "rate", fmt.Sprint(cp.pid()), "0").want(t, 0)
		cp.wait(t).want(t, exitOK)
		fi, err := os.Lstat(runDir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != victim.uid {
			t.Errorf("%s: %v, %v: want a folder of %s, 0700", runDir, fi.Mode(), err, victim)
		}
	})
	for _, attack := range []struct {
		name, says string
		setup      func()
	}{
		{"made by the attacker", "belongs to uid", func() { attacker.sh(t, `mkdir -m 0777 "$1"`, runDir) }},
		{"a symlink to the attacker's folder", "symlink", func() {
			attacker.sh(t, `mkdir -m 0777 "$1" && ln -s "$1" "$2"`, attackerDir, runDir)
		}},
		{"open to all", "may be written by others", func() { victim.sh(t, `mkdir "$1" && chmod 0777 "$1"`, runDir) }},
	} {
		t.Run(attack.name, func(t *testing.T) {
			os.RemoveAll(runDir)
			os.RemoveAll(attackerDir)
			attack.setup()
			cp := startAs(t, victim, env, tree.bin, src, filepath.Join(tree.victim, "dst"))
			ctl := filepath.Join(runDir, controlName(cp.pid()))
			waitUntil(t, func() bool {
				_, err := os.Stat(ctl)
				return err == nil || strings.Contains(cp.output(), "cannot be changed")
			})
			// The temporary the control file was written through before
			// the fix; now nothing in the folder is used at all.
			attacker.sh(t, `ln -sf "$1" "$2"`, precious, ctl+".new")
			victim.run(t, env, tree.bin, "rate", fmt.Sprint(cp.pid()), "2M").want(t, 2, attack.says)
			cp.signal(t, syscall.SIGTERM)
			cp.wait(t).want(t, exitInterrupted+int(syscall.SIGTERM))
			if got, _ := os.ReadFile(precious); !bytes.Equal(got, want) {
				t.Fatalf("the victim's file %s now holds %q: written through the attacker's symlink", precious, got)
			}
			if !strings.Contains(cp.output(), "the rate cap cannot be changed while copying (ringcp rate): "+runDir) {
				t.Errorf("the copy does not say why its cap cannot be changed:\n%s", cp.output())
			}
		})
	}
}

// startAs starts a copy of 16 MiB at 1 MiB/s as u: time to act on it.
func startAs(t *testing.T, u testUser, env []string, bin, src, dst string) *proc {
	t.Helper()
	return startCmd(t, u.command(env, bin, "--max-rate", "1M", "--progress", "none", src, dst), nil)
}
