package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/unpack"
)

// importJob is one import of an image onto the volume.
type importJob struct {
	*importer
	cfg     *cdi.Config
	vol     cdi.Volume
	t       *cdi.Transfer
	metrics *cdi.Metrics
	look    sniffed
	ca      *caBundle
	// held is what an earlier run of this import took of a filesystem
	// volume (disk.img, its partial file): free again for this one.
	held int64
}

// copy imports the image: what it is (sniff), the copy's options, the
// plan and the size decision, the copy, and the volume finished.
func (j *importJob) copy() cdi.Outcome {
	web, err := j.webOptions()
	if err != nil {
		return cdi.Outcome{Err: err}
	}
	defer j.ca.close()
	if j.look, err = sniff(j.ctx, j.t, web); err != nil {
		return cdi.Outcome{Err: err}
	}
	if err := j.look.refusal(j.t); err != nil {
		return cdi.Outcome{Err: err}
	}
	j.logf("importing %s (%s) onto %s", redactedSrc(j.t.SrcURL), j.look, j.describeVolume())
	if j.held, err = readyVolume(j.vol, j.t); err != nil {
		return cdi.Outcome{Err: err}
	}
	if j.look.virtual >= 0 {
		// CDI's size check, in CDI's words, before copier's own (which
		// CDI's controller would not read as a volume too small).
		if _, err := j.targetSize(j.look.virtual); err != nil {
			return cdi.Outcome{Err: err}
		}
	}
	o := j.options(web)
	if !o.Resume && j.t.StatePath != "" {
		// An earlier run's resume state and partial file (its image was
		// resumable, this one is not: compressed now, or a checksum
		// asked) are of no use: left, they would take the space the
		// image needs, which readyVolume counted as free again.
		if err := dropResume(j.vol, j.t); err != nil {
			return cdi.Outcome{Err: err}
		}
	}
	plan, err := j.prepare(&o)
	if err != nil {
		return cdi.Outcome{Err: err}
	}
	var target int64
	if j.look.sized {
		if target, err = j.targetSize(plan.Length); err != nil {
			plan.Close()
			return cdi.Outcome{Err: err}
		}
	}
	rep, err := j.run(plan, &o)
	if err != nil {
		return cdi.Outcome{Err: j.copyFailed(rep, err), Details: j.details(rep, target)}
	}
	if !j.look.sized {
		// Sized where it ended: too large for the volume, it failed
		// with ENOSPC; CDI's size rule still grows it.
		if target, err = j.targetSize(rep.Length); err != nil {
			// Not a refusal (exit 2) any more: the volume was written.
			return cdi.Outcome{Err: errors.New(err.Error()), Details: j.details(rep, target)}
		}
	}
	if err := j.checkWritten(rep); err != nil {
		return cdi.Outcome{Err: err, Details: j.details(rep, target)}
	}
	if err := finishVolume(j.vol, j.t, target); err != nil {
		return cdi.Outcome{Err: err, Details: j.details(rep, target)}
	}
	return cdi.Outcome{PreallocationApplied: j.t.Preallocate, Details: j.details(rep, target)}
}

// options are the copy's: the flags' (j.base), the transfer's, and what
// the image is.
func (j *importJob) options(web copier.WebOptions) copier.Options {
	o := j.base
	o.Src, o.Dst = withUser(j.t.SrcURL, j.t.Username, j.t.Password), j.t.Dst
	o.Direct, o.Sparse = copier.DirectMode(j.t.Direct), copier.SparseMode(j.t.Sparse)
	o.TargetIsZero = j.t.TargetIsZero
	// The volume is the import's to overwrite, whatever it held before
	// (a disk image of an earlier import included).
	o.DstFormat = copier.FormatRaw
	o.SrcFormat = j.look.srcFormat()
	o.ExpectChecksum = j.t.Checksum
	o.Web = web
	// A checksum covers every byte served: a resumed copy would not read
	// the earlier part again, so an import with one starts over.
	o.Resume = j.t.Resume && j.look.resumable() && j.t.Checksum == ""
	if o.Resume {
		// The server's ETag or Last-Modified is no proof: nginx's is
		// the file's mtime and size, the same for another image
		// published with both (a reproducible build's). What an
		// earlier run copied is compared with the image before the
		// rest is copied after it; CDI never resumes, so never mixes.
		o.StatePath, o.ResumeProve = j.t.StatePath, true
	}
	o.OnProgress = j.progress
	if o.BlockSize == 0 && !o.Yield && (o.MaxRate == 0 || copier.CapRequest(o.MaxRate) >= importBlock) {
		o.BlockSize = importBlock
	}
	return o
}

// importBlock is the import's block size unless --block-size or --yield
// decide it, or a --max-rate whose requests (copier.CapRequest, 1/40 s
// of it) are smaller, under 80 MiB/s: the cap then sizes the buffers, a
// second of it in blocks of 1 to 2 MiB (copier's share.go), no more
// than these. Above it, the cap left the copy's default 8 MiB blocks (1/40 s
// of the cap when less), eight of them: --max-rate 400M kept 64 MiB of
// buffers, four times the uncapped import's; given, the block is the
// cap's request anyway, and the importer never changes its cap (no
// `ringcp rate`). A pod's memory limit counts every buffer, and
// the default 8 MiB blocks, eight of them for an image read in ranges
// over eight connections, were most of the importer's cgroup peak. With
// 2 MiB blocks a 1 GiB qcow2 over nginx onto a loop device peaked at
// 27-28 MiB instead of 76 (page cache included), no slower (1.2-1.6 s
// against 1.9, on a loaded machine); a .raw.xz at 56 instead of 64.
const importBlock = 2 << 20

// prepare plans the copy. A resume state that is not of this import
// (the image changed since, the volume was reused) is dropped and the
// import starts over, as CDI's importer always does: a pod restart must
// not be refused for ever.
func (j *importJob) prepare(o *copier.Options) (*copier.Plan, error) {
	plan, err := unlessStopped(j.ctx, j.sig, func() (*copier.Plan, error) { return copier.Prepare(*o) })
	var r *copier.RefusedError
	if err != nil && j.look.container != "" && errors.As(err, &r) && r.Kind == copier.KindNotSupported {
		// The image's server does not serve ranges.
		return nil, &cdi.Refusal{Name: "the image", Value: j.look.String(), Unserved: true,
			Reason: "ringcp reads a " + j.look.container + " image at any offset, which this " + string(j.t.Source) + " server does not offer (" + message(err) + ")"}
	}
	if err == nil || !o.Resume || !errors.As(err, &r) || r.Kind != copier.KindChanged {
		return plan, err
	}
	j.logf("the resume state is not of this import (%s): starting over", message(err))
	if err := dropResume(j.vol, j.t); err != nil {
		return nil, err
	}
	return unlessStopped(j.ctx, j.sig, func() (*copier.Plan, error) { return copier.Prepare(*o) })
}

// run runs the plan. A resumed copy whose earlier part is not the image
// now (the object replaced under the same ETag, the volume written
// since) is refused before it writes; the import then starts over, as
// prepare does for a state of another import: a restart must not fail
// for ever on it.
func (j *importJob) run(plan *copier.Plan, o *copier.Options) (copier.Report, error) {
	rep, err := plan.Run(j.ctx)
	var r *copier.RefusedError
	if err == nil || !o.Resume || !errors.As(err, &r) || r.Kind != copier.KindChanged || j.ctx.Err() != nil {
		return rep, err
	}
	j.logf("what an earlier run copied is not of this image (%s): starting over", message(err))
	if err := dropResume(j.vol, j.t); err != nil {
		return rep, err
	}
	again, err := unlessStopped(j.ctx, j.sig, func() (*copier.Plan, error) { return copier.Prepare(*o) })
	if err != nil {
		return rep, err
	}
	return again.Run(j.ctx)
}

// targetSize is CDI's size decision for an image of virtual bytes,
// made before anything is written when the image says its size (a
// gzip, zstd or bzip2 image is sized where it ends, after the copy).
func (j *importJob) targetSize(virtual int64) (int64, error) {
	vol := j.vol
	vol.Available += j.held // what an earlier run of this import took
	return j.cfg.TargetSize(vol, virtual)
}

// copyFailed is the termination message's error for a copy that failed:
// a checksum mismatch in CDI's words, which CDI's controller does not
// retry.
func (j *importJob) copyFailed(rep copier.Report, err error) error {
	var mismatch *expectsum.MismatchError
	if errors.As(err, &mismatch) {
		// Not retried: what an earlier part of it left is of no use.
		if derr := dropResume(j.vol, j.t); derr != nil {
			j.logf("%v", derr)
		}
		return fmt.Errorf("%w: %v", cdi.ErrChecksumMismatch, err)
	}
	var canceled *copier.CanceledError
	if errors.As(err, &canceled) {
		return errors.New(stopText(j.sig.caught(), j.base, rep, err))
	}
	return err
}

// checkWritten refuses to call an import complete when the volume starts
// like a disk image container: what was copied was a container's bytes
// (the object changed between the sniff and the copy), not the disk.
func (j *importJob) checkWritten(rep copier.Report) error {
	format, where := guard.ImageFormat(j.t.Dst, rep.Length, rep.Length)
	if format == "" || format == "luks" {
		return nil
	}
	return fmt.Errorf("the volume holds a %s image's container (%s), not the disk inside: the image changed while it was imported", format, where)
}

// progress feeds the endpoint: the bytes copied of the total, or, for a
// compressed image, the bytes read of the object, as CDI counts.
func (j *importJob) progress(st copier.Status) {
	switch {
	case j.look.compression != unpack.Raw && j.look.objectSize > 0:
		j.metrics.SetProgress(st.BytesIn, j.look.objectSize)
	case j.look.sized:
		j.metrics.SetProgress(st.BytesDone, st.BytesTotal)
	}
}

// details are ringcp's part of the termination message.
func (j *importJob) details(rep copier.Report, target int64) *cdi.Details {
	scratch := "unused"
	if j.t.Block && rep.StatePath != "" {
		scratch = "resume state"
	}
	return &cdi.Details{Version: moduleVersion(), Engine: rep.Engine, Bytes: rep.Bytes,
		Size: max(target, rep.Length), Resumed: rep.Resumed > 0, Scratch: scratch}
}

func (j *importJob) describeVolume() string {
	if j.vol.Mode == cdi.Block {
		return fmt.Sprintf("the block volume %s (%d bytes)", j.vol.Path, j.vol.Available)
	}
	return fmt.Sprintf("%s on the filesystem volume %s (%d bytes free)", j.vol.Path, j.vol.Dir, j.vol.Available)
}

// withUser puts HTTP basic auth's user and password into the URL, where
// the HTTP kind takes them from (and never prints them).
func withUser(raw, user, password string) string {
	if user == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

// redactedSrc is the image's URL as the log and the termination message
// may show it: no password, no signature or token of a presigned URL.
func redactedSrc(raw string) string { return httpobj.RedactOperand(raw) }

// setS3Keys gives the S3 kind the import's keys, and only them: the
// environment is the kind's first source of credentials, and a shared
// credentials file in the pod must not sign an anonymous import.
func setS3Keys(s *cdi.S3Store) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		os.Unsetenv(k)
	}
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	os.Setenv("AWS_CONFIG_FILE", os.DevNull)
	if s.AccessKeyID != "" {
		os.Setenv("AWS_ACCESS_KEY_ID", s.AccessKeyID)
		os.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	}
}
