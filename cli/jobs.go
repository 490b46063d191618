package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// jobsCommand is ringcp --jobs FILE: every job of the list in this
// process, on one buffer budget (copier.PrepareAll, Batch.Run). Any
// refusal, of any job, refuses them all before anything is written (a
// refusal: exit 2). Then a job that fails stops alone; the outcome is nil
// when every job is complete, a failure when one is not, an interruption
// when a signal stopped them (main.go's exitCode turns it into the code).
func jobsCommand(cfg config, stdout, stderr io.Writer) error {
	list, err := readJobList(cfg.jobs)
	if err == nil {
		err = remoteJobLines(cfg, list)
	}
	if err != nil {
		err = &flagError{flag: "--jobs", err: &usageError{err}}
		if cfg.json {
			fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
			return writeJobsJSON(stdout, &reported{err}, nil, jsonTotal{})
		}
		return err
	}
	if err := checkJobStates(cfg, list); err != nil {
		return jobsStoppedEarly(stdout, stderr, cfg, list, &flagError{flag: "--state", err: &usageError{err}})
	}
	opts := make([]copier.Options, len(list))
	own := map[int]error{}
	for i, j := range list {
		opts[i] = j.options(cfg.opts, cfg.opts.StatePath)
		opts[i].MaxRate = 0 // --max-rate caps the jobs together: BatchOptions.MaxRate
		if err := refuseOwnStream(j.dst, stdout, stderr); err != nil {
			own[i] = err
		}
	}
	ctx, sig := withSignals()
	defer sig.stop()
	batch, err := unlessStopped(ctx, sig, func() (*copier.Batch, error) {
		return copier.PrepareAll(opts, copier.BatchOptions{Parallel: cfg.parallel, MaxRate: cfg.opts.MaxRate})
	})
	var stopped *interruptedError
	if errors.As(err, &stopped) {
		return jobsStoppedEarly(stdout, stderr, cfg, list, err)
	}
	if err != nil || len(own) > 0 {
		return refusedJobs(stdout, stderr, cfg, list, opts, err, own, 0)
	}
	explainBatch(stderr, cfg, list, batch)
	defer startRateControl(batch, stderr)()
	stopProgress := startJobsProgress(cfg.progress, batch, stdout, stderr)
	rep, err := batch.Run(ctx)
	stopProgress()
	if refusedRun(err) {
		// Nothing was written; a signal during acquiring (a resumed
		// job comparing what an earlier run copied) still sets the code.
		return refusedJobs(stdout, stderr, cfg, list, opts, err, nil, sig.caught())
	}
	if cfg.verbose {
		for i, j := range rep.Jobs {
			for _, n := range j.Notes {
				fmt.Fprintf(stderr, "ringcp: job %d: %s\n", i+1, n)
			}
		}
		if rep.Neighbour != nil {
			fmt.Fprintf(stderr, "ringcp: %s\n", rep.Neighbour)
		}
	}
	return reportJobs(stdout, stderr, cfg, list, opts, batch, rep, sig.caught())
}

// checkJobStates checks where a batch's resume states go: with --jobs,
// --state names a folder that holds one state file per job (a file
// shared by every job would mix their records); a line's --state names
// that job's own file, and needs --resume.
func checkJobStates(cfg config, list []jobLine) error {
	for _, j := range list {
		if j.rng.StatePath != "" && !cfg.opts.Resume {
			return fmt.Errorf("--jobs %s line %d: --state is for --resume: give --resume on the command line", cfg.jobs, j.line)
		}
	}
	dir := cfg.opts.StatePath
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("--state %s: with --jobs, --state names a folder for the jobs' state files: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("--state %s: with --jobs, --state names a folder that holds one state file per job, not a file (a job's own file goes on its line: --state PATH)", dir)
	}
	return nil
}

// refusedRun: Run refused the batch before any job wrote (a job could
// not acquire, or the buffers could not be mapped).
func refusedRun(err error) bool {
	var be *copier.BatchError
	if errors.As(err, &be) {
		return be.Refused
	}
	return err != nil
}

// refusedJobs prints one line per refused job, then what it means (and,
// with --json, the batch's object), and returns the refusal, reported.
// err is PrepareAll's or Run's; own holds the jobs whose DST is one of
// ringcp's own streams.
func refusedJobs(stdout, stderr io.Writer, cfg config, list []jobLine, opts []copier.Options, err error, own map[int]error, sig syscall.Signal) error {
	why := map[int]error{}
	var be *copier.BatchError
	if errors.As(err, &be) {
		for _, j := range be.Jobs {
			why[j.Index] = j.Err
		}
	} else if err != nil {
		fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	}
	for i, e := range own {
		why[i] = e
	}
	for i, j := range list {
		if e, ok := why[i]; ok {
			fmt.Fprintf(stderr, "ringcp: job %d (line %d): %s\n", i+1, j.line, message(e))
		}
	}
	if len(why) > 0 {
		fmt.Fprintf(stderr, "ringcp: refused %d of %d jobs; nothing was written\n", len(why), len(list))
	}
	refusal := &copier.RefusedError{Kind: copier.KindBadInput, Reason: fmt.Sprintf("refused %d of %d jobs", len(why), len(list)), Err: err}
	for _, e := range why {
		var r *copier.RefusedError
		if errors.As(e, &r) {
			refusal.Kind = r.Kind
		}
	}
	var out error = &reported{refusal}
	if sig != 0 {
		out = &interruptedError{sig: sig, err: out}
	}
	if cfg.json {
		jobs, total := jobsRefused(list, opts, why)
		return writeJobsJSON(jobsJSONStream(list, stdout, stderr), out, jobs, total)
	}
	return out
}

// jobsStoppedEarly is the outcome of a batch stopped before any job could
// be checked: a --state that does not fit, a signal while checking. With
// --json it prints the batch's object, every job not started.
func jobsStoppedEarly(stdout, stderr io.Writer, cfg config, list []jobLine, err error) error {
	if !cfg.json {
		return err
	}
	fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	jobs, total := jobsRefused(list, nil, nil)
	return writeJobsJSON(jobsJSONStream(list, stdout, stderr), &reported{err}, jobs, total)
}

// explainBatch prints what -v explains for each job, and what --force
// overrode, as a single copy does, each line naming its job.
func explainBatch(stderr io.Writer, cfg config, list []jobLine, b *copier.Batch) {
	for i, p := range b.Plans {
		switch {
		case cfg.verbose:
			for _, n := range p.Notes {
				fmt.Fprintf(stderr, "ringcp: job %d: %s\n", i+1, n)
			}
		case p.Forced != "":
			fmt.Fprintf(stderr, "ringcp: job %d: --force: writing %s although %s\n", i+1, list[i].dst, p.Forced)
		}
	}
	if cfg.verbose {
		fmt.Fprintf(stderr, "ringcp: %d jobs, %d at once, sharing %d buffers of %d bytes\n", len(list), b.Parallel, b.Slots, b.BlockSize)
	}
}

// jobsJSONStream is where the batch's --json object goes: stderr when a
// job's DST is ringcp's stdout (the batch is refused), where the object
// would land in it; stdout otherwise.
func jobsJSONStream(list []jobLine, stdout, stderr io.Writer) io.Writer {
	for _, j := range list {
		if isStream(j.dst, stdout) {
			return stderr
		}
	}
	return stdout
}
