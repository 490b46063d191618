package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
)

// `ringcp cdi-importer` runs as KubeVirt CDI's importer pod runs its
// importer: the import described by CDI's environment (package cdi
// parses it) copied by copier straight onto the volume, the progress
// served for CDI's controller, the result left in the termination log.
// This file is the command: its flags, the order of the steps, the exit
// code; cdiimport_linux.go is the copy, cdisniff.go what the image is,
// cdivolume_linux.go what is done to the volume beside the copy.

const cdiUsage = `Usage: ringcp cdi-importer [flags]

Imports the disk image KubeVirt CDI's importer environment describes
(IMPORTER_SOURCE http, s3 or none; IMPORTER_ENDPOINT...) onto the volume
CDI mounted (/data/disk.img, or the block device /dev/cdi-block-volume),
or extracts a tar archive into /data (IMPORTER_CONTENTTYPE=archive),
serves the progress on https://:8443/metrics for CDI's controller, and
writes the result to /dev/termination-log. CDI's controller runs it as its
importer image's entrypoint with the one argument -v=N.

Flags:
`

// cdiOptionFlags are ringcp's copy flags the importer takes beside its
// own: how fast and how hard it may use the disk and the network.
var cdiOptionFlags = []string{"engine", "block-size", "queue-depth", "http-connections", "max-rate", "ioprio", "yield", "verify", "sync-every"}

// cdiFlags are the importer's flags, bound to paths and o.
func cdiFlags(paths *cdi.Paths, o *copier.Options) (*pflag.FlagSet, *bool) {
	fs := newFlagSet("ringcp cdi-importer")
	paths.AddFlags(fs)
	defineOptionFlags(fs, o, cdiOptionFlags...)
	help := fs.BoolP("help", "h", false, "show this help")
	return fs, help
}

// runCDIImporter is `ringcp cdi-importer`. Every outcome, a bad flag
// included, is written to the termination log; the exit code is CDI's
// (0 done, and for a checksum mismatch, which CDI reads from the message
// and does not retry) or ringcp's (1 failed, 2 refused, 128+signal).
func runCDIImporter(args []string, stdout, stderr io.Writer) error {
	paths := cdi.DefaultPaths()
	var o copier.Options
	fs, help := cdiFlags(&paths, &o)
	err := fs.Parse(args)
	switch {
	case err == nil && *help:
		fmt.Fprint(stdout, cdiUsage+fs.FlagUsages())
		return errHelp
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("takes no operands (%q): its environment says what to import", fs.Arg(0))
	}
	if err != nil {
		err = &cdi.Refusal{Name: "the command line", Reason: message(err)}
		return finishImport(paths, cdi.Outcome{Err: err}, stderr, 0)
	}
	// Nothing the importer makes (disk.img, its resume state, the
	// partial file) is for other users: the volume's group (fsGroup, the
	// qemu group) reads and writes it, others do not, as CDI's 0660.
	syscall.Umask(0o007)
	ctx, sig := withSignals()
	defer sig.stop()
	imp := &importer{paths: paths, base: o, stderr: stderr, ctx: ctx, sig: sig}
	out := imp.run()
	return finishImport(paths, out, stderr, sig.caught())
}

// finishImport writes the outcome where the kubelet reads it, says it on
// stderr (the pod's log), and turns it into the exit code.
func finishImport(paths cdi.Paths, out cdi.Outcome, stderr io.Writer, caught syscall.Signal) error {
	text := out.Text()
	var werr error
	if _, err := os.Stat(paths.TerminationLog); err == nil || paths.TerminationLog != cdi.DefaultTerminationLog {
		werr = cdi.WriteOutcome(paths.TerminationLog, out)
	} // else: no kubelet made it, and no file is made in /dev
	fmt.Fprintf(stderr, "ringcp cdi-importer: %s\n", text)
	if werr != nil {
		werr = fmt.Errorf("cannot write the termination message to %s: %w", paths.TerminationLog, werr)
		if out.Err == nil {
			// The import is on the volume, but CDI cannot learn it: a
			// failure, which its controller retries (and a resumed
			// copy finds complete).
			return &exitStatus{code: ExitFailed, err: werr}
		}
		fmt.Fprintf(stderr, "ringcp cdi-importer: %s\n", werr)
	}
	var refused *copier.RefusedError
	var cdiRefused *cdi.Refusal
	switch {
	case out.ExitZero():
		return nil
	case caught != 0:
		return &reported{&exitStatus{code: exitInterrupted + int(caught), err: out.Err}}
	case errors.As(out.Err, &refused), errors.As(out.Err, &cdiRefused):
		return &reported{&exitStatus{code: exitRefused, err: out.Err}}
	}
	return &reported{&exitStatus{code: ExitFailed, err: out.Err}}
}

// importer is one run of the command.
type importer struct {
	paths  cdi.Paths
	base   copier.Options // ringcp's flags
	stderr io.Writer
	ctx    context.Context
	sig    *signals
}

func (im *importer) logf(format string, args ...any) {
	fmt.Fprintf(im.stderr, "ringcp cdi-importer: "+format+"\n", args...)
}

// run is the import, step by step: the environment, the volume, the
// progress endpoint, the ready file, the transfer, the copy (or a blank
// disk, or an archive extracted: cdiarchive_linux.go), the done file.
func (im *importer) run() cdi.Outcome {
	cfg, err := cdi.Parse(os.Environ())
	if err != nil {
		if cdi.IsUnserved(err) && im.paths.Delegate != "" {
			im.logf("%v: handing over to %s", err, im.paths.Delegate)
			err = errors.Join(err, cdi.RunDelegate(im.paths, os.Environ()))
		}
		return cdi.Outcome{Err: err}
	}
	if err := refuseUnchecked(cfg); err != nil {
		return cdi.Outcome{Err: err}
	}
	vol, err := probeVolume(im.paths)
	if err != nil {
		return cdi.Outcome{Err: err}
	}
	if err := refuseArchive(cfg, vol); err != nil {
		return cdi.Outcome{Err: err}
	}
	metrics, err := cdi.StartMetrics(im.paths.MetricsAddr, cfg.OwnerUID)
	if err != nil {
		// CDI's importer serves its progress from a goroutine that
		// gives up quietly and imports all the same: an import must
		// not fail, and be retried for ever, for its progress display.
		im.logf("no progress endpoint on %s (%v): importing without one", im.paths.MetricsAddr, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		metrics.Close(ctx)
	}()
	if err := cdi.WaitReady(im.ctx, cfg.ReadyFile, cdi.ReadyTimeout, time.Second); err != nil {
		return cdi.Outcome{Err: err}
	}
	t, err := cfg.Transfer(im.paths, vol)
	if err != nil {
		return cdi.Outcome{Err: err}
	}
	if why := checkScratch(t, im.paths); why != "" {
		im.logf("no resume state for the block volume: %s %s", im.paths.ScratchDir, why)
	}
	job := &importJob{importer: im, cfg: cfg, vol: vol, t: t, metrics: metrics}
	var out cdi.Outcome
	switch {
	case cfg.Source == cdi.SourceNone:
		out = job.blank()
	case cfg.ContentType == cdi.ContentArchive:
		out = job.archive()
	default:
		out = job.copy()
	}
	if out.Err == nil {
		metrics.SetPercent(100)
		if err := cdi.TouchDone(cfg.DoneFile); err != nil {
			im.logf("cannot create the done file %s: %v", cfg.DoneFile, err)
		}
	}
	return out
}

// refuseUnchecked refuses a checksum ringcp cannot check: CDI takes
// sha1, ringcp's --expect-checksum does not. An import whose checksum is
// not checked must not claim it was. (A qcow2 or vmdk image's checksum
// is refused once the image is known: sniffed.refusal.)
func refuseUnchecked(cfg *cdi.Config) error {
	if cfg.Checksum != nil && cfg.Checksum.Algo == "sha1" {
		return &cdi.Refusal{Name: cdi.EnvChecksum, Value: cfg.Checksum.String(), Unserved: true,
			Reason: "ringcp checks md5, sha256 and sha512 digests, not sha1"}
	}
	return nil
}
