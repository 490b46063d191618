package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/syncproto"
)

// A sync across hosts: one end ssh://[user@]host/path, the other on this
// host, through package syncproto (Push to a remote DST, Pull from a
// remote SRC). This host's end is opened as blocksync opens ends (the
// refusals a copy makes); the other host's by ringcp sync --serve there.

// remoteSync runs one sync with an ssh:// end.
func remoteSync(cfg config, stdout, stderr io.Writer) error {
	o := &cfg.opts
	push := syncproto.IsRemote(o.Dst)
	r, err := remoteArgs(cfg, push, stdout, stderr)
	if err != nil {
		if cfg.json { // on stderr when DST is this host's stdout
			return writeRemoteJSON(jsonStream(o.Dst, stdout, stderr), cfg, remoteOutcome{}, err)
		}
		return err
	}
	ctx, sig := withSignals()
	defer sig.stop()
	start, cpu0 := time.Now(), cpuSeconds()
	out, err := remoteRun(ctx, cfg, r, push, stdout, stderr)
	out.seconds, out.cpu = time.Since(start).Seconds(), cpuSeconds()-cpu0
	if err != nil {
		code := remoteExit(err, sig.caught())
		if code >= 128 {
			fmt.Fprintf(stderr, "ringcp: interrupted by %v\n", sig.caught())
		}
		fmt.Fprintf(stderr, "ringcp: sync %s -> %s: %v\n", o.Src, o.Dst, err)
		switch {
		case code == exitRefused:
		case !out.Digest.Valid():
			// No digest was agreed: the other host's ringcp never
			// welcomed the session, and no change goes out or is
			// applied before it does.
			fmt.Fprintf(stderr, "ringcp: sync did not start: %s was not changed\n", o.Dst)
		default:
			fmt.Fprintf(stderr, "ringcp: sync did not complete: %s holds a mix of old and new granules, or, if it did not exist, was not created; run the sync again\n", o.Dst)
		}
		err = &reported{&exitStatus{code: code, err: err}}
	}
	if cfg.json {
		return writeRemoteJSON(stdout, cfg, out, err)
	}
	if err == nil {
		printRemote(stderr, cfg, out)
	}
	return err
}

// remoteArgs checks a sync across hosts' command line and reads its
// ssh:// end.
func remoteArgs(cfg config, push bool, stdout, stderr io.Writer) (syncproto.Remote, error) {
	o := &cfg.opts
	if push && syncproto.IsRemote(o.Src) {
		return syncproto.Remote{}, usagef("both ends are ssh:// URLs: one end of a sync is on this host")
	}
	if err := remoteFlagsOK(cfg, push); err != nil {
		return syncproto.Remote{}, err
	}
	if !push {
		// The report or messages would land over the synced bytes.
		if err := refuseOwnStream(o.Dst, stdout, stderr); err != nil {
			return syncproto.Remote{}, err
		}
	}
	r, err := syncproto.ParseRemote(map[bool]string{true: o.Dst, false: o.Src}[push])
	if err != nil {
		return r, usagef("%v", err)
	}
	return r, nil
}

// remoteOutcome is what a sync across hosts did: the session's result,
// and how this host's end was read.
type remoteOutcome struct {
	syncproto.Result
	engine  string // the backend that read this host's SRC ("" when blocksync read it)
	direct  bool   // with O_DIRECT
	seconds float64
	cpu     float64 // this process's CPU seconds
}

// printRemote is the summary of a sync across hosts that completed.
func printRemote(w io.Writer, cfg config, out remoteOutcome) {
	o := &cfg.opts
	res := out.Result
	here, there := "SRC", "DST"
	if syncproto.IsRemote(o.Src) {
		here, there = "DST", "SRC"
	}
	how := ""
	if out.engine != "" {
		how = fmt.Sprintf(" (%s%s)", out.engine, map[bool]string{true: ", O_DIRECT", false: ""}[out.direct])
	}
	fmt.Fprintf(w, "ringcp: synced %s -> %s: %d of %d granules differed (%s written, %s zeroed) in %.1fs, %.1fs CPU\n",
		o.Src, o.Dst, res.Changed, res.Granules, units.Format(res.Written), units.Format(res.Zeroed), out.seconds, out.cpu)
	read := map[string]int64{"SRC": res.SrcRead, "DST": res.DstRead}
	fmt.Fprintf(w, "ringcp: sync: read %s of %s here%s and %s of %s on %s; sent %s, received %s (digests %v)\n",
		units.Format(read[here]), here, how, units.Format(read[there]), there, res.Peer,
		units.Format(res.Sent), units.Format(res.Received), res.Digest)
}

// remoteFlagsOK refuses the copy flags a sync across hosts does not
// take: it always compares all of both ends, checks end to end, and
// sizes DST itself.
func remoteFlagsOK(cfg config, push bool) error {
	o := &cfg.opts
	switch {
	case o.SrcOffset != 0 || o.DstOffset != 0 || o.LengthSet:
		return usagef("offsets and --length do not go with a sync")
	case o.ExtentsSet || o.DirtyBitmap != "":
		return usagef("--extents and --dirty-bitmap restrict a copy, not a sync")
	case o.Resume || o.Checksum != nil:
		return usagef("--resume and --checksum are not supported for a sync with an ssh:// end")
	case cfg.jobs != "":
		return usagef("--jobs runs syncs between ends on this host; a sync with an ssh:// end runs one at a time")
	case o.SrcFormat != "" && o.SrcFormat != copier.FormatAuto && o.SrcFormat != copier.FormatRaw,
		o.DstFormat != "" && o.DstFormat != copier.FormatRaw:
		// A sync moves bytes as they are: it neither reads nor makes an
		// image, nor decompresses.
		return usagef("--src-format and --dst-format take only raw for a sync with an ssh:// end (an image or a compressed SRC is refused unless --src-format raw sends its bytes)")
	case !push && (o.Yield || o.IOPrio != ""):
		// This host's DST is read and written by syncproto's own
		// goroutines, not the engine: refused rather than ignored.
		return usagef("--yield and --ioprio are not supported yet for a sync from an ssh:// SRC (they are to an ssh:// DST)")
	case !push && (o.BlockSize != 0 || o.QueueDepth != 0 || (o.Engine != "" && o.Engine != copier.EngineAuto) || (o.Direct != "" && o.Direct != copier.DirectAuto)):
		return usagef("-b, -q, --engine and --direct are not supported for a sync from an ssh:// SRC: this host's DST is read and written by the sync itself, not the engine (they are to an ssh:// DST, whose SRC the engine reads here)")
	case o.TargetIsZero:
		return usagef("--target-is-zero does not go with a sync: it reads DST")
	case o.ExpectChecksum != "" || o.SrcSize != 0:
		return usagef("--expect-checksum and --size are for a stream SRC; a sync with an ssh:// end reads a file or block device and checks it end to end")
	case o.Sparse != "" && o.Sparse != copier.SparseAuto:
		return usagef("--sparse is not supported for a sync with an ssh:// end: granules that are zeros in SRC are always punched or zeroed in DST")
	}
	return nil
}

// remoteRun dials the other host and runs the sync.
func remoteRun(ctx context.Context, cfg config, r syncproto.Remote, push bool, stdout, stderr io.Writer) (remoteOutcome, error) {
	o := &cfg.opts
	ssh := syncproto.SSH{RemoteRingcp: cfg.sync.remoteRingcp}
	if f := strings.Fields(cfg.sync.ssh); len(f) > 0 {
		ssh.Command, ssh.Options = f[0], f[1:]
	}
	if o.MaxRate > 0 {
		// The other host's reads and writes keep the cap too.
		ssh.ServeArgs = []string{fmt.Sprintf("--max-rate=%d", o.MaxRate)}
	}
	prog := &blocksync.Progress{}
	opt := syncproto.Options{Granule: o.SyncGranule, Force: o.Force, Create: true, Verify: o.Verify, Progress: prog,
		RawSrc: o.SrcFormat == copier.FormatRaw, RawDst: o.DstFormat == copier.FormatRaw}
	if push {
		return pushRun(ctx, cfg, r, ssh, opt, stdout, stderr)
	}
	dst, err := blocksync.OpenTarget(o.Dst, blocksync.TargetOptions{Create: true, Force: o.Force})
	if err != nil {
		return remoteOutcome{}, err
	}
	defer dst.Close()
	if !opt.RawDst && !o.Force {
		if err := dst.RefuseImage("DST"); err != nil {
			return remoteOutcome{}, err
		}
	}
	direct := blocksync.NewDirect(dst)
	defer direct.Release()
	target := syncproto.Limit(direct, o.MaxRate) // counts what moves here; caps it with --max-rate
	conn, err := syncproto.Dial(ctx, r, ssh)
	if err != nil {
		return remoteOutcome{}, err
	}
	end := startSyncProgress(cfg.progress, prog, target.Moved, stdout, stderr)
	res, err := syncproto.Pull(ctx, conn, r.Path, target, opt)
	end(err == nil)
	srcChangedLeft(err, dst.Created())
	return remoteOutcome{Result: res, direct: direct.Direct()}, err
}

// pushRun syncs the remote DST from SRC here, read through the engine.
func pushRun(ctx context.Context, cfg config, r syncproto.Remote, ssh syncproto.SSH, opt syncproto.Options, stdout, stderr io.Writer) (remoteOutcome, error) {
	o := &cfg.opts
	file, err := blocksync.OpenSource(o.Src)
	if err != nil {
		return remoteOutcome{}, err
	}
	if !opt.RawSrc {
		if err := file.RefuseImage("SRC"); err != nil {
			file.Close()
			return remoteOutcome{}, err
		}
	}
	// The engine reads SRC's bytes as they are (SrcFormat raw), as
	// blocksync sized them: an image or a compressed SRC was refused
	// above unless --src-format raw asked for its bytes.
	each := copier.EachOptions{ReadOptions: copier.ReadOptions{Engine: o.Engine, Direct: o.Direct, BlockSize: o.BlockSize,
		QueueDepth: o.QueueDepth, Progress: &engine.Progress{}, SrcFormat: copier.FormatRaw}, MaxRate: o.MaxRate, IOPrio: o.IOPrio, Yield: o.Yield}
	src, err := newEngineSource(ctx, file, each)
	if err != nil {
		file.Close()
		return remoteOutcome{}, err
	}
	src.begin()
	conn, err := syncproto.Dial(ctx, r, ssh)
	if err != nil {
		src.Close()
		return remoteOutcome{}, err
	}
	end := startSyncProgress(cfg.progress, opt.Progress, func() int64 { return each.Progress.Verified.Load() }, stdout, stderr)
	res, err := syncproto.Push(ctx, conn, src, r.Path, opt)
	end(err == nil)
	src.Close()
	srcChangedLeft(err, res.Created)
	rep := src.report()
	return remoteOutcome{Result: res, engine: rep.Engine, direct: rep.DirectSrc}, err
}

// srcChangedLeft has a sync that failed because SRC changed while it was
// read (err, a *copier.SrcChangedError from this host's engine or the
// other host) say what that left: a DST that existed holds a mix; a new
// one was never named (created). It is a copy's message, not a read
// pass's.
func srcChangedLeft(err error, created bool) {
	var sc *copier.SrcChangedError
	if errors.As(err, &sc) {
		sc.Of, sc.Mixed = "", !created
	}
}

// remoteExit is the exit code of a sync across hosts that failed: a
// refusal (here or there) 2, a digest mismatch 3, a signal 128+N.
func remoteExit(err error, sig syscall.Signal) int {
	var (
		ref  *blocksync.RefusedError
		cref *copier.RefusedError
		mis  *syncproto.MismatchError
	)
	switch {
	case sig != 0:
		return exitInterrupted + int(sig)
	case errors.As(err, &ref), errors.As(err, &cref):
		return exitRefused
	case errors.As(err, &mis):
		return exitMismatch
	}
	return ExitFailed
}

// remoteJSON is the --json body of a sync across hosts, after the
// envelope (command "sync").
type remoteJSON struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Peer     string `json:"peer"`
	Size     int64  `json:"size"`     // SRC's, and DST's after
	OldSize  int64  `json:"old_size"` // DST's before
	SrcRead  int64  `json:"bytes_read_src"`
	DstRead  int64  `json:"bytes_read_dst"`
	Written  int64  `json:"bytes_written"`
	Zeroed   int64  `json:"bytes_zeroed"`
	Granules int64  `json:"granules"`
	Changed  int64  `json:"granules_changed"`
	Digest   string `json:"digest"`
	Sent     int64  `json:"bytes_sent"`
	Received int64  `json:"bytes_received"`
	Created  bool   `json:"created"`
	// How this host's end was read and written: the engine's backend
	// ("" when not through the engine: a pull's DST), with O_DIRECT.
	Engine string `json:"engine"`
	Direct bool   `json:"direct"`
	// MaxRate is the cap both hosts kept, bytes a second (0: none).
	MaxRate      int64   `json:"max_rate"`
	Milliseconds int64   `json:"milliseconds"`
	CPUSeconds   float64 `json:"cpu_seconds"` // this process's
}

func writeRemoteJSON(stdout io.Writer, cfg config, out remoteOutcome, err error) error {
	res := out.Result
	st := res.Stats
	j := remoteJSON{Src: shown(cfg.opts.Src), Dst: shown(cfg.opts.Dst), Peer: res.Peer, Size: st.Size, OldSize: st.OldSize,
		SrcRead: st.SrcRead, DstRead: st.DstRead, Written: st.Written, Zeroed: st.Zeroed, Granules: st.Granules,
		Changed: st.Changed, Sent: res.Sent, Received: res.Received, Created: res.Created,
		Engine: out.engine, Direct: out.direct, MaxRate: cfg.opts.MaxRate,
		Milliseconds: int64(out.seconds * 1000), CPUSeconds: math.Round(out.cpu*1000) / 1000}
	if res.Digest != 0 {
		j.Digest = res.Digest.String()
	}
	return writeObject(stdout, newEnvelope("sync", err), err, j)
}

// cpuSeconds is the CPU time this process used so far.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
