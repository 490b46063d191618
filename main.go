// Command ringcp copies block devices, disk images and large files at device
// speed: deep queues of aligned O_DIRECT reads and writes through io_uring,
// an fdatasync barrier at the end, and a pread/pwrite pool where io_uring is
// missing or switched off.
//
//	ringcp [flags] SRC DST
//	ringcp demo
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitFailed      = 1   // the copy failed while running
	exitRefused     = 2   // bad input or unsafe target; nothing written
	exitMismatch    = 3   // verification found a difference
	exitInterrupted = 128 // plus the signal number: 130 SIGINT, 143 SIGTERM
)

func main() {
	if err := checkDescriptors(); err != nil {
		fmt.Fprintf(os.Stderr, "ringcp: %v\n", err)
		os.Exit(exitRefused)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command, with its streams, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "demo" {
		return runDemo(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rate" {
		return rateCommand(args[1:], stdout, stderr)
	}
	cfg, err := parseArgs(args, stdout)
	if errors.Is(err, errHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ringcp: %s\n", oneLine(err))
		return exitRefused
	}
	return copyCommand(cfg, stdout, stderr)
}

func copyCommand(cfg config, stdout, stderr io.Writer) int {
	progress := &engine.Progress{}
	cfg.opts.Progress = progress
	if err := refuseOwnStream(cfg.opts.Dst, stdout, stderr); err != nil {
		return report(stderr, err)
	}
	plan, err := copier.Prepare(cfg.opts)
	if err != nil {
		return report(stderr, err)
	}
	if cfg.verbose {
		for _, n := range plan.Notes {
			fmt.Fprintf(stderr, "ringcp: %s\n", n)
		}
	} else if plan.Forced != "" {
		fmt.Fprintf(stderr, "ringcp: --force: writing %s although %s\n", cfg.opts.Dst, plan.Forced)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	defer startRateControl(plan, stderr)()
	stopProgress := startProgress(cfg.progress, progress, plan.Length, stderr)
	rep, err := plan.Run(ctx)
	stopProgress()
	if cfg.verbose {
		for _, n := range rep.Notes {
			fmt.Fprintf(stderr, "ringcp: %s\n", n)
		}
	}
	if err != nil {
		code := stoppedCopy(stderr, cfg.opts, rep, err, sig.caught())
		if cfg.json {
			writeJSON(stdout, stderr, rep, err)
		}
		return code
	}
	if cfg.verbose {
		fmt.Fprintf(stderr, "ringcp: engine %s: %s\n", rep.Engine, rep.Caps.Detail)
	}
	if cfg.json {
		return writeJSON(stdout, stderr, rep, nil)
	}
	printSummary(stderr, rep, "copied")
	return exitOK
}

// report prints one line for err and picks the exit code.
func report(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "ringcp: %s\n", oneLine(err))
	var refused *copier.RefusedError
	if errors.As(err, &refused) {
		return exitRefused
	}
	return exitFailed
}

// stopSignals end a copy cleanly: SIGINT (^C), SIGTERM (kill, systemd),
// and SIGHUP (the terminal or ssh session went away). A signal the
// process was started with ignored stays ignored: under nohup, or as a
// background job of a script, the copy goes on, as the AIX technote's
// nohup dd runs expect. (signal.Notify would otherwise un-ignore it.)
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

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
