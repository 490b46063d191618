package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
)

// copyCommand is `ringcp [flags] SRC DST`: Prepare, Run, and what to say
// about it. It prints the lines of a copy that stopped (what DST holds)
// itself, and returns the outcome for main.go to turn into an exit code.
func copyCommand(cfg config, stdout, stderr io.Writer) error {
	if err := refuseOwnStream(cfg.opts.Dst, stdout, stderr); err != nil {
		return jsonIfAsked(cfg, jsonStream(cfg.opts.Dst, stdout, stderr), copier.Report{}, err)
	}
	if cfg.opts.Dst == "-" {
		// The copy goes to stdout: the --json object goes to stderr, on
		// a line of its own (schema/ringcp-output.schema.json).
		cfg.opts.Stream.Stdout, stdout = stdout, stderr
	}
	if cfg.verbose {
		cfg.opts.Web.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "ringcp: "+format+"\n", args...) }
	}
	endProgress, redrawn := startProgress(cfg.progress, &cfg.opts, stdout, stderr)
	ctx, sig := withSignals()
	defer sig.stop()
	plan, err := unlessStopped(ctx, sig, func() (*copier.Plan, error) { return copier.Prepare(cfg.opts) })
	if err != nil {
		return jsonIfAsked(cfg, stdout, copier.Report{}, err)
	}
	if cfg.verbose {
		printNotes(stderr, plan.Notes)
	} else {
		sayOverrides(stderr, cfg.opts, plan)
	}
	defer startRateControl(plan, stderr)()
	prefix := ""
	if redrawn {
		prefix = "\r\033[K" // the status line replaces the live line, which is redrawn after it
	}
	stopStatus := answerStatus(stderr, prefix, statusLine(plan))
	rep, err := plan.Run(ctx)
	stopStatus()
	endProgress()
	if cfg.verbose {
		printNotes(stderr, rep.Notes)
	}
	if err != nil {
		stoppedSync(stderr, cfg.opts, rep)
		err = stoppedCopy(stderr, cfg.opts, rep, err, sig.caught())
		return jsonIfAsked(cfg, stdout, rep, err)
	}
	if cfg.verbose {
		fmt.Fprintf(stderr, "ringcp: engine %s: %s\n", rep.Engine, rep.EngineDetail)
	}
	if cfg.json {
		return writeJSON(stdout, cfg.opts, rep, nil)
	}
	printSummary(stderr, rep, map[bool]string{false: "copied", true: "synced"}[cfg.opts.Sync])
	printChanged(stderr, rep)
	printTrust(stderr, rep)
	return nil
}

// sayOverrides prints, without -v, what the plan changed of what was
// asked: what --force overrode, and a --block-size rounded to the
// O_DIRECT alignment (a size given for a reason should not change
// silently).
func sayOverrides(stderr io.Writer, o copier.Options, plan *copier.Plan) {
	if plan.Forced != "" {
		fmt.Fprintf(stderr, "ringcp: --force: writing %s although %s\n", o.Dst, plan.Forced)
	}
	if o.BlockSize != 0 && plan.BlockSize != o.BlockSize {
		fmt.Fprintf(stderr, "ringcp: --block-size %d rounded to %d (%s), a multiple of the O_DIRECT alignment, so that O_DIRECT stays on\n",
			o.BlockSize, plan.BlockSize, units.Format(int64(plan.BlockSize)))
	}
}

// jsonIfAsked prints the --json object for a copy that did not complete,
// and returns its error: the exit code stays the copy's.
func jsonIfAsked(cfg config, stdout io.Writer, rep copier.Report, err error) error {
	if cfg.json {
		writeJSON(stdout, cfg.opts, rep, err)
	}
	return err
}

func printNotes(stderr io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(stderr, "ringcp: %s\n", oneLine(flagWords.Replace(n)))
	}
}

// stopSignals end a copy cleanly: SIGINT (^C), SIGTERM (kill, systemd),
// SIGHUP (the terminal or ssh session went away) and SIGQUIT (^\). Left to
// the Go runtime, SIGQUIT would end the process at once, with no drain,
// no barrier and no word of what DST holds, and with exit status 2, which
// means "refused, nothing written". A signal the process was started
// with ignored stays ignored: under nohup, or as a background job of a
// script, the copy goes on, as the AIX technote's nohup dd runs expect.
// (signal.Notify would otherwise un-ignore it.)
//
// SIGPIPE is ignored instead (main): when stderr is a pipe whose reader
// went away (ssh without a terminal dropped, a tee killed), the messages
// are lost but the copy completes, or fails, as it would have; the Go
// runtime would otherwise kill the process on the next progress line.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signals turns the stop signals into a cancelled context: the engine
// stops submitting, drains, syncs what was written, and the command exits
// 128+signal.
type signals struct {
	ch     chan os.Signal
	got    chan syscall.Signal
	cancel context.CancelFunc
}

func withSignals() (context.Context, *signals) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &signals{ch: make(chan os.Signal, 1), got: make(chan syscall.Signal, 1), cancel: cancel}
	for _, sig := range stopSignals {
		if !signal.Ignored(sig) {
			signal.Notify(s.ch, sig)
		}
	}
	go func() {
		if v, ok := <-s.ch; ok {
			s.got <- v.(syscall.Signal)
			cancel()
		}
	}()
	return ctx, s
}

// errStoppedChecking: a stop signal came while SRC and DST were being
// checked, before anything was written.
var errStoppedChecking = errors.New("stopped while checking SRC and DST; nothing was written")

// unlessStopped runs check (Prepare, which writes nothing) unless a stop
// signal comes first: then the command stops at once and says so, as at
// any other phase, instead of waiting out a server that stalls its
// handshake (up to --nbd-timeout) and instead of the signal's default
// action, which ended the process without a line or a --json object
// (SIGQUIT: a goroutine dump and exit 2, "refused"). check goes on alone
// until the process exits; it has nothing to undo.
func unlessStopped[T any](ctx context.Context, sig *signals, check func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := check()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var none T
		caught := sig.caught()
		return none, &interruptedError{sig: caught, err: fmt.Errorf("%s: %w", stoppedBy(caught, "interrupted"), errStoppedChecking)}
	}
}

func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.ch)
	s.cancel()
}

func (s *signals) caught() syscall.Signal {
	select {
	case v := <-s.got:
		s.got <- v
		return v
	default:
		return 0
	}
}
