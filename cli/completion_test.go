package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bashComplete sources the bash script and completes the words, the last
// one being the word under the cursor; it returns COMPREPLY.
func bashComplete(t *testing.T, dir string, words ...string) []string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "ringcp.bash")
	if err := os.WriteFile(script, []byte(bashCompletion()), 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	cmd := exec.Command("bash", "-c", `compopt() { :; }; source "$1"; COMP_WORDS=(`+strings.Join(quoted, " ")+`); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _ringcp; printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("bash completion of %q: %v\n%s", words, err, stderr.String())
	}
	return strings.Fields(string(out))
}

// TestCompletionBash: the bash script completes commands, each command's
// own flags (none of another's), a flag's choices, paths where a path goes
// and nothing after a flag that takes a number.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	dir := t.TempDir()
	randomFile(t, filepath.Join(dir, "disk.img"), 1, 1)
	cases := []struct {
		words     []string
		want, not []string
	}{
		{[]string{"ringcp", "ve"}, []string{"verify"}, []string{"checksum"}},
		{[]string{"ringcp", "di"}, []string{"disk.img"}, nil},
		{[]string{"ringcp", "--dst-f"}, []string{"--dst-format"}, nil},
		{[]string{"ringcp", "--"}, []string{"--jobs", "--force", "--src-format", "--json", "--size"}, []string{"--dir"}},
		{[]string{"ringcp", "--engine", ""}, []string{"auto", "uring", "pool", "nbd"}, nil},
		{[]string{"ringcp", "--progress", "q"}, []string{"qemu"}, nil},
		{[]string{"ringcp", "--jobs", "d"}, []string{"disk.img"}, nil},
		{[]string{"ringcp", "-b", ""}, nil, []string{"disk.img"}},
		{[]string{"ringcp", "-v", "disk.img", ""}, []string{"disk.img"}, []string{"verify"}},
		{[]string{"ringcp", "verify", "--"}, []string{"--json", "--progress", "--length"}, []string{"--force", "--jobs"}},
		{[]string{"ringcp", "checksum", "--"}, []string{"--json"}, []string{"--dst-offset"}},
		{[]string{"ringcp", "demo", "--"}, []string{"--size", "--dir"}, []string{"--json"}},
		{[]string{"ringcp", "dd", "i"}, []string{"if=", "iflag=", "ibs="}, []string{"of="}},
		{[]string{"ringcp", "dd", "if", "=", "d"}, []string{"disk.img"}, nil},
		{[]string{"ringcp", "completion", ""}, []string{"bash", "zsh", "fish"}, nil},
	}
	for _, c := range cases {
		got := bashComplete(t, dir, c.words...)
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("%q: %q, want %s among them", c.words, got, w)
			}
		}
		for _, w := range c.not {
			if contains(got, w) {
				t.Errorf("%q: %q offers %s", c.words, got, w)
			}
		}
	}
}

// TestCompletionEveryFlag: every flag of every command, and every dd
// operand, is in each shell's script: they are made from the flag sets.
func TestCompletionEveryFlag(t *testing.T) {
	scripts := map[string]string{"bash": bashCompletion(), "zsh": zshCompletion(), "fish": fishCompletion()}
	for _, c := range subcommands {
		for _, f := range visibleFlags(flagSetOf(c)) {
			for shell, s := range scripts {
				spelled := "--" + f.Name
				if shell == "fish" {
					spelled = "-l " + f.Name
				}
				if !strings.Contains(s, spelled) {
					t.Errorf("%s: ringcp %s's %s is missing", shell, c.name, spelled)
				}
			}
		}
		for shell, s := range scripts {
			if c.name != "" && !strings.Contains(s, c.name) {
				t.Errorf("%s: the command %s is missing", shell, c.name)
			}
		}
	}
	for _, op := range ddOperands {
		var a ddArgs
		value, ok := map[string]string{"iflag": "direct", "oflag": "direct", "conv": "notrunc", "status": "none", "iformat": "raw"}[op]
		if !ok {
			value = "1"
		}
		if err := a.set(op, value); err != nil {
			t.Errorf("dd operand %s= is not one ringcp dd takes: %v", op, err)
		}
	}
}

// TestCompletionSyntax: zsh and fish parse their scripts (zsh -n, fish
// -n); the command prints each and refuses another shell.
func TestCompletionSyntax(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			r := cli(t, "completion", shell)
			r.want(t, exitOK)
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed (Debian: %s): its script's syntax is not checked", shell, shell)
			}
			file := filepath.Join(t.TempDir(), "script")
			if err := os.WriteFile(file, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		})
	}
	cli(t, "completion", "tcsh").want(t, exitRefused, "want bash, zsh or fish")
	cli(t, "completion").want(t, exitRefused, "completion takes one shell")
}
