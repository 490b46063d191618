package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
)

// FuzzParseArgs feeds command lines (arguments separated by NUL) to the
// flag parser. It must never panic; a refusal must be one line fit for
// "ringcp: <error>"; an accepted command line must hold exactly two
// operands (none with --jobs) and no size or depth the copier could not
// take. The seeds are
// the bad-input table and a few good lines, so plain go test runs them.
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

// checkAccepted holds an accepted command line to what Prepare can take;
// with --jobs, to no operands (the list has them).
func checkAccepted(t *testing.T, args []string, cfg config) {
	t.Helper()
	o := cfg.opts
	switch {
	case o.BlockSize < 0 || o.BlockSize > copier.MaxBlockSize:
		t.Fatalf("%q: block size %d accepted", args, o.BlockSize)
	case o.QueueDepth < 0:
		t.Fatalf("%q: queue depth %d accepted", args, o.QueueDepth)
	case o.SrcOffset < 0 || o.DstOffset < 0 || o.Length < 0:
		t.Fatalf("%q: negative offset or length accepted: %+v", args, o)
	case o.Length != 0 && !o.LengthSet:
		t.Fatalf("%q: length %d without LengthSet", args, o.Length)
	case o.NBD.Connections < 1 || o.NBD.Connections > copier.MaxNBDConnections || o.NBD.Timeout < 0:
		t.Fatalf("%q: NBD options %+v accepted", args, o.NBD)
	case o.MaxRate < 0:
		t.Fatalf("%q: negative rate cap accepted", args)
	case !validIOPrio(o.IOPrio):
		t.Fatalf("%q: I/O priority %q accepted", args, o.IOPrio)
	case !slices.Contains(copier.EngineChoices(), string(o.Engine)) || !slices.Contains(copier.DirectChoices, string(o.Direct)) ||
		!slices.Contains(copier.SparseChoices, string(o.Sparse)) || !slices.Contains(copier.OffloadChoices, string(o.Offload)):
		t.Fatalf("%q: a value the library does not take was accepted: %+v", args, o)
	}
	if cfg.jobs != "" {
		if o.Src != "" || o.Dst != "" || cfg.parallel < 0 {
			t.Fatalf("%q: --jobs with operands %q %q, --parallel %d", args, o.Src, o.Dst, cfg.parallel)
		}
		return
	}
	if !contains(args, o.Src) || !contains(args, o.Dst) {
		t.Fatalf("%q: operands %q %q are not among the arguments", args, o.Src, o.Dst)
	}
}

func validIOPrio(s string) bool {
	_, err := engine.ParseIOPrio(s)
	return err == nil
}
