package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
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
			return writeRemoteJSON(jsonStream(o.Dst, stdout, stderr), cfg, syncproto.Result{}, err)
		}
		return err
	}
	ctx, sig := withSignals()
	defer sig.stop()
	res, err := remoteRun(ctx, cfg, r, push)
	if err != nil {
		code := remoteExit(err, sig.caught())
		if code >= 128 {
			fmt.Fprintf(stderr, "ringcp: interrupted by %v\n", sig.caught())
		}
		fmt.Fprintf(stderr, "ringcp: sync %s -> %s: %v\n", o.Src, o.Dst, err)
		if code != exitRefused {
			fmt.Fprintf(stderr, "ringcp: sync did not complete: %s holds a mix of old and new granules (a new DST was not named); run the sync again\n", o.Dst)
		}
		err = &reported{&exitStatus{code: code, err: err}}
	}
	if cfg.json {
		return writeRemoteJSON(stdout, cfg, res, err)
	}
	if err == nil {
		fmt.Fprintf(stderr, "ringcp: synced %s -> %s: %d of %d granules differed (%s written, %s zeroed); read %s here, sent %s, received %s (digests %v)\n",
			o.Src, o.Dst, res.Changed, res.Granules, units.Format(res.Written), units.Format(res.Zeroed),
			units.Format(res.SrcRead+res.DstRead), units.Format(res.Sent), units.Format(res.Received), res.Digest)
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
	if err := remoteFlagsOK(cfg); err != nil {
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

// remoteFlagsOK refuses the copy flags a sync across hosts does not
// take: it always compares all of both ends, checks end to end, and
// sizes DST itself.
func remoteFlagsOK(cfg config) error {
	o := &cfg.opts
	switch {
	case o.SrcOffset != 0 || o.DstOffset != 0 || o.LengthSet:
		return usagef("offsets and --length do not go with a sync")
	case o.ExtentsSet || o.DirtyBitmap != "":
		return usagef("--extents and --dirty-bitmap restrict a copy, not a sync")
	case o.Resume || o.Checksum != nil || cfg.jobs != "":
		return usagef("--resume, --checksum and --jobs are not supported for a sync with an ssh:// end")
	case o.SrcFormat != "" && o.SrcFormat != copier.FormatAuto && o.SrcFormat != copier.FormatRaw,
		o.DstFormat != "" && o.DstFormat != copier.FormatRaw:
		// A sync moves bytes as they are: it neither reads nor makes an
		// image, nor decompresses.
		return usagef("--src-format and --dst-format take only raw for a sync with an ssh:// end (an image or a compressed SRC is refused unless --src-format raw sends its bytes)")
	case o.MaxRate != 0 || o.Yield || o.IOPrio != "":
		// blocksync's readers on both hosts have no rate cap or priority
		// yet: refused rather than ignored.
		return usagef("--max-rate, --yield and --ioprio are not supported yet for a sync with an ssh:// end")
	}
	return nil
}

// remoteRun dials the other host and runs the sync.
func remoteRun(ctx context.Context, cfg config, r syncproto.Remote, push bool) (syncproto.Result, error) {
	o := &cfg.opts
	ssh := syncproto.SSH{RemoteRingcp: cfg.sync.remoteRingcp}
	if f := strings.Fields(cfg.sync.ssh); len(f) > 0 {
		ssh.Command, ssh.Options = f[0], f[1:]
	}
	rawSrc, rawDst := o.SrcFormat == copier.FormatRaw, o.DstFormat == copier.FormatRaw
	opt := syncproto.Options{Granule: o.SyncGranule, Force: o.Force, Create: true, RawSrc: rawSrc, RawDst: rawDst}
	if push {
		src, err := blocksync.OpenSource(o.Src)
		if err != nil {
			return syncproto.Result{}, err
		}
		defer src.Close()
		if !rawSrc {
			if err := src.RefuseImage("SRC"); err != nil {
				return syncproto.Result{}, err
			}
		}
		conn, err := syncproto.Dial(ctx, r, ssh)
		if err != nil {
			return syncproto.Result{}, err
		}
		return syncproto.Push(ctx, conn, src, r.Path, opt)
	}
	dst, err := blocksync.OpenTarget(o.Dst, blocksync.TargetOptions{Create: true, Force: o.Force})
	if err != nil {
		return syncproto.Result{}, err
	}
	defer dst.Close()
	if !rawDst && !o.Force {
		if err := dst.RefuseImage("DST"); err != nil {
			return syncproto.Result{}, err
		}
	}
	conn, err := syncproto.Dial(ctx, r, ssh)
	if err != nil {
		return syncproto.Result{}, err
	}
	return syncproto.Pull(ctx, conn, r.Path, dst, opt)
}

// remoteExit is the exit code of a sync across hosts that failed: a
// refusal (here or there) 2, a digest mismatch 3, a signal 128+N.
func remoteExit(err error, sig syscall.Signal) int {
	var (
		ref *blocksync.RefusedError
		mis *syncproto.MismatchError
	)
	switch {
	case sig != 0:
		return exitInterrupted + int(sig)
	case errors.As(err, &ref):
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
}

func writeRemoteJSON(stdout io.Writer, cfg config, res syncproto.Result, err error) error {
	st := res.Stats
	j := remoteJSON{Src: shown(cfg.opts.Src), Dst: shown(cfg.opts.Dst), Peer: res.Peer, Size: st.Size, OldSize: st.OldSize,
		SrcRead: st.SrcRead, DstRead: st.DstRead, Written: st.Written, Zeroed: st.Zeroed, Granules: st.Granules,
		Changed: st.Changed, Sent: res.Sent, Received: res.Received, Created: res.Created}
	if res.Digest != 0 {
		j.Digest = res.Digest.String()
	}
	return writeObject(stdout, newEnvelope("sync", err), err, j)
}
