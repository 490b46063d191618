package cli

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// FuzzParseArgs feeds command lines (arguments separated by NUL) to the
// flag parser. It must never panic; a refusal must be one line fit for
// "ringcp: <error>"; an accepted command line must hold exactly two
// operands (none with --jobs), and the Options it makes, with ends that do
// not exist, must be refused by Prepare in one line that names flags,
// never Options fields: a value the flags let through is copier's to
// check, in the command's words. The seeds are the bad-input table and a
// few good lines, so plain go test runs them.
func FuzzParseArgs(f *testing.F) {
	for _, tc := range badInputs {
		f.Add(strings.Join(tc.args, "\x00"))
	}
	for _, s := range []string{
		"a\x00b", "-b\x004k\x00-q\x0032\x00a\x00b", "--length=1G\x00--src-offset\x001M\x00a\x00b",
		"--engine=pool\x00--direct\x00never\x00--sync\x00none\x00a\x00b", "--force\x00--json\x00-v\x00a\x00b",
		"-b\x001GiB\x00a\x00b", "--\x00-a\x00-b", "-h",
		"--jobs\x00list", "--jobs\x00-\x00--parallel\x002\x00-q\x004",
		"--verify\x00--checksum\x00a\x00b", "--resume\x00--state\x00s\x00--sync-every\x003s\x00a\x00b",
		"--nbd-connections\x008\x00--nbd-timeout\x0030s\x00nbd://h/e\x00b", "--nbd-connections=0\x00a\x00b",
		"--max-rate\x0050M\x00--ioprio\x00be:7\x00--yield\x00a\x00b", "--ioprio=idle\x00a\x00b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		var help bytes.Buffer
		cfg, err := parseArgs(args, &help)
		switch {
		case err == errHelp:
			if help.Len() == 0 {
				t.Fatal("help asked for, none printed")
			}
		case err != nil:
			if msg := message(err); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("%q: error %q is not one line", args, msg)
			}
		default:
			checkAccepted(t, args, cfg)
		}
	})
}

// checkAccepted holds an accepted command line to its operands, and its
// Options to copier's checks: Prepare refuses them, for a value or for
// the missing SRC, in one line in the command's words.
func checkAccepted(t *testing.T, args []string, cfg config) {
	t.Helper()
	o := cfg.opts
	if cfg.jobs == "" && (!contains(args, o.Src) || !contains(args, o.Dst)) {
		t.Fatalf("%q: operands %q %q are not among the arguments", args, o.Src, o.Dst)
	}
	if cfg.jobs != "" && (o.Src != "" || o.Dst != "") {
		t.Fatalf("%q: --jobs with operands %q %q", args, o.Src, o.Dst)
	}
	dir := t.TempDir()
	o.Src, o.Dst = filepath.Join(dir, "missing-src"), filepath.Join(dir, "dst")
	_, err := copier.Prepare(o)
	var refused *copier.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("%q: Prepare: %v, want a refusal (SRC does not exist)", args, err)
	}
	if msg := message(err); strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "Options.") {
		t.Fatalf("%q: refusal %q is not one line in the command's words", args, msg)
	}
	if f := refused.Field; f != "" && f != "Src" && f != "Dst" && flagOf(f) == "" {
		t.Fatalf("%q: refusal for Options.%s, which no flag sets", args, f)
	}
}
