package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/syncproto"
)

// ringcp sync SRC DST makes DST equal to SRC writing only the granules
// that differ. Between ends on this host it is a copy with
// copier.Options.Sync: the engine reads both ends in large parallel
// reads, compares granules in each slot and writes only those that
// differ, with every flag, check, report and exit code of a copy
// (--verify, --json, --progress, --max-rate, --jobs...). With an
// ssh://[user@]host/path end it runs `ringcp sync --serve` there over
// the system's ssh (syncremote.go).

const syncUsage = `usage: ringcp sync [flags] SRC DST
       ringcp sync [flags] SRC ssh://[user@]host[:port]/path
       ringcp sync [flags] ssh://[user@]host[:port]/path DST

Make DST equal to SRC, writing only the granules (4 KiB, --granule) that
differ. Both ends are read; granules that are zeros in SRC are punched or
zeroed in DST; a file DST gets SRC's size, a device DST must hold SRC.
A sync is in place: one that fails or is stopped leaves DST a mix of old
and new granules, says so and exits non-zero; run it again.
Across hosts, ringcp runs on the other host (ringcp sync --serve, over
ssh with your keys and ~/.ssh/config): DST's digests are computed there
and only differing granules cross the network; the result is checked
end to end. The copy flags apply (ringcp --help).
`

func runSync(args []string, stdout, stderr io.Writer) error {
	if slices.Contains(args, "--serve") {
		// The other host's half; its messages go to stderr, which ssh
		// carries back.
		if code := syncproto.ServeMain(args, os.Stdin, stdout, stderr); code != 0 {
			return &reported{&exitStatus{code: code, err: fmt.Errorf("ringcp sync --serve exited %d", code)}}
		}
		return nil
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, syncUsage)
		return errHelp
	}
	cfg, err := parseArgs(args, stdout)
	switch {
	case errors.Is(err, errHelp):
		return err
	case err != nil && wantsJSON(args):
		cfg.opts.Sync = true // the object says sync, and the operands given
		return badLineJSON(args, stdout, stderr, cfg, err)
	case err != nil:
		return err
	}
	cfg.opts.Sync = true
	if syncproto.IsRemote(cfg.opts.Src) || syncproto.IsRemote(cfg.opts.Dst) {
		return remoteSync(cfg, stdout, stderr)
	}
	if cfg.sync.ssh != "" || cfg.sync.remoteRingcp != "" {
		return usagef("--ssh and --remote-ringcp are for a sync with an ssh:// end")
	}
	if cfg.jobs != "" {
		return jobsCommand(cfg, stdout, stderr)
	}
	return copyCommand(cfg, stdout, stderr)
}

// exitStatus is an outcome whose exit code was decided where it
// happened: the serving side's, a sync across hosts'.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string { return e.err.Error() }
func (e *exitStatus) Unwrap() error { return e.err }

// printChanged is the line a sync or a restricted copy adds to the
// summary: what it compared and what it changed.
func printChanged(w io.Writer, r copier.Report) {
	c := r.Changed
	switch {
	case c == nil:
	case c.Granules > 0:
		fmt.Fprintf(w, "ringcp: sync: %d of %d granules differed (%s written, %s zeroed); read %s of SRC and %s of DST\n",
			c.GranulesChanged, c.Granules, units.Format(r.Bytes), units.Format(r.BytesZeroed+r.BytesHoles),
			units.Format(r.BytesRead), units.Format(c.BytesReadDst))
	default:
		fmt.Fprintf(w, "ringcp: only %d ranges (%s); DST's other bytes kept\n", c.Ranges, units.Format(c.RangeBytes))
	}
}

// stoppedSync is the line a sync that did not complete adds: DST may
// hold old and new granules side by side.
func stoppedSync(w io.Writer, o copier.Options, r copier.Report) {
	if o.Sync && r.DstState != copier.DstUntouched && r.DstState != copier.DstDiscarded && r.DstState != copier.DstComplete {
		fmt.Fprintf(w, "ringcp: sync did not complete: %s holds a mix of old and new granules; run the sync again\n", o.Dst)
	}
}
