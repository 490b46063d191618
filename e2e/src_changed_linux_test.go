package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// copyWhileWritten runs ringcp args (a copy of src, slowed by
// --max-rate) and, once its progress passes 20%, writes src in place at
// offset 0, behind the copy's read position, as a program that edits a
// file does.
func copyWhileWritten(t *testing.T, src string, args ...string) result {
	t.Helper()
	return whileWritten(t, src, 20, append([]string{"--max-rate", "4M"}, args...))
}

// whileWritten runs ringcp args, its progress in percent on fd 3, and
// writes src as copyWhileWritten does once it passes from% (and before
// 90%): args slow the copy enough (--max-rate).
func whileWritten(t *testing.T, src string, from int, args []string) result {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	at := 0
	if len(args) > 0 && args[0] == "sync" { // the verb goes first
		at = 1
	}
	progress := []string{"--progress", "percent", "--progress-fd", "3", "--progress-interval", "50ms"}
	args = append(append(append([]string(nil), args[:at]...), progress...), args[at:]...)
	cmd := exec.Command(binary(t), args...)
	cmd.ExtraFiles = []*os.File{pw}
	written := make(chan bool, 1)
	go func() {
		done := false
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			n, _ := strconv.Atoi(strings.TrimSuffix(sc.Text(), "/100"))
			if !done && n >= from && n < 90 {
				done = true
				f, err := os.OpenFile(src, os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteAt([]byte("written while it was read"), 0)
					f.Close()
				}
				if err != nil {
					t.Error(err)
				}
			}
		}
		written <- done
	}()
	r := runToEnd(t, cmd)
	pw.Close()
	if !<-written {
		t.Fatalf("the copy ended before SRC was written:\n%s", r.stderr)
	}
	return r
}

// TestSrcChangedWhileCopied: a SRC file written in place while ringcp
// reads it fails the copy (exit 1), on both engines: a new
// DST never gets its name, an existing one is said to hold a mix, and
// --json says so.
func TestSrcChangedWhileCopied(t *testing.T) {
	for _, eng := range []string{"uring", "pool"} {
		t.Run(eng, func(t *testing.T) {
			if eng == "uring" {
				uringtest.NeedOn(t)
			}
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			randomFile(t, src, 8<<20, 61)
			r := copyWhileWritten(t, src, "--engine", eng, src, dst)
			r.want(t, exitFailed, "SRC "+src+" changed while it was read (it was modified", "copy from a snapshot or a file nothing writes", "discarded")
			mustNotExist(t, dst)

			randomFile(t, dst, 8<<20, 62)
			r = copyWhileWritten(t, src, "--engine", eng, "--json", src, dst)
			r.want(t, exitFailed, "DST holds a mix of its old and new content", "DST "+dst+" holds all 8388608 bytes")
			var j jsonReport
			if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			if j.Outcome != "failed" || j.DstState != "mixed" || j.Error == nil || j.Error.Kind != "failed" || j.Error.Path != src || !strings.Contains(j.Error.Message, "changed while it was read") {
				t.Errorf("--json: %s", r.stdout)
			}
		})
	}
}

// TestSrcChangedResumable: a --resume copy whose SRC is written while it
// is read kept its state and partial file, and a rerun of the same
// command was refused (exit 2: SRC no longer matches the state). Now
// the state and the partial file go, the run says so, and the same
// command copies again from the start.
func TestSrcChangedResumable(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	randomFile(t, src, 8<<20, 63)
	r := copyWhileWritten(t, src, "--resume", src, dst)
	r.want(t, exitFailed, "changed while it was read", "resume state "+dst+".ringcp-state removed", "copies again from the start")
	if strings.Contains(r.stderr, "run the same command again") {
		t.Errorf("says to run the same command again:\n%s", r.stderr)
	}
	mustNotExist(t, dst)
	mustNotExist(t, dst+".ringcp-state")
	mustNotExist(t, dst+".ringcp-partial")
	ringcp(t, "--resume", src, dst).want(t, exitOK)
}
