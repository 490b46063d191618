package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/s3obj"
	"github.com/ringcp/ringcp/stream"
	"github.com/ringcp/ringcp/unpack"
	"github.com/ringcp/ringcp/untar"
)

// IMPORTER_CONTENTTYPE=archive: CDI's importer untars the object (a tar,
// maybe compressed) into the filesystem volume at /data, with GNU tar
// --preserve-permissions --no-same-owner, and checks the checksum of the
// bytes served after. Here the object is read as the copy reads it
// (parallel ranges ahead of the reader, else one stream; decompressed on
// the fly), and extracted by package untar, which keeps every member
// beneath the volume. Nothing is resumed: a restarted pod extracts again
// over what is there, as CDI's does.

// refuseArchive refuses what CDI's importer cannot do with an archive
// either: a blank disk of it (CDI's words), a block volume (CDI's untar
// into /data fails there: a block volume has no filesystem).
func refuseArchive(cfg *cdi.Config, vol cdi.Volume) error {
	switch {
	case cfg.ContentType != cdi.ContentArchive:
		return nil
	case cfg.Source == cdi.SourceNone:
		return &cdi.Refusal{Name: "Cannot create empty disk with content type archive"}
	case vol.Mode == cdi.Block:
		return &cdi.Refusal{Name: cdi.EnvContentType, Value: string(cdi.ContentArchive),
			Reason: "needs a filesystem volume: an archive's files are extracted into " + vol.Dir + ", and the block volume " + vol.Path + " has no filesystem (CDI's importer fails there too)"}
	}
	return nil
}

// archive extracts the object into the volume's directory.
func (j *importJob) archive() cdi.Outcome {
	details := &cdi.Details{Version: moduleVersion(), Engine: "untar", Scratch: "unused"}
	web, err := j.webOptions()
	if err != nil {
		return cdi.Outcome{Err: err}
	}
	defer j.ca.close()
	obj, err := openArchive(j.ctx, j.t, web)
	if err != nil {
		if j.ctx.Err() != nil {
			return cdi.Outcome{Err: j.ctx.Err()}
		}
		return cdi.Outcome{Err: &cdi.Refusal{Name: cdi.EnvEndpoint, Reason: "cannot be opened: " + err.Error()}}
	}
	defer obj.Close()
	// A stop (SIGTERM) cuts the reads in flight short.
	defer context.AfterFunc(j.ctx, func() { obj.Close() })()
	src, done := archiveStream(obj)
	defer done()
	in := stream.NewCounter(src)
	j.metrics.SetProgress(0, max(obj.Size(), 0))
	var hashed *expectsum.Reader
	var r io.Reader = in
	if j.t.Checksum != "" {
		e, err := expectsum.Parse(j.t.Checksum)
		if err != nil {
			return cdi.Outcome{Err: err}
		}
		hashed = expectsum.NewReader(r, e)
		r = hashed
	}
	r = progressReader{r: r, in: in, job: j, total: obj.Size()}
	j.logf("extracting the archive %s (%s) into %s", redactedSrc(j.t.SrcURL), describeObject(obj), j.vol.Dir)
	st, err := extractArchive(j.ctx, r, j.vol.Dir, j.logf)
	details.Bytes, details.Size = st.Bytes, st.Bytes
	if err != nil && j.ctx.Err() != nil {
		err = fmt.Errorf("%s: the extraction stopped after %s of files; what was extracted stays, and the next run extracts the archive again",
			stoppedBy(j.sig.caught(), "interrupted"), byteCount(st.Bytes))
		return cdi.Outcome{Err: err, Details: details}
	}
	if err != nil {
		return cdi.Outcome{Err: fmt.Errorf("unable to untar files from endpoint: %w", err), Details: details}
	}
	if hashed != nil {
		if err := hashed.Verify(); err != nil {
			return j.archiveMismatch(err, details)
		}
	}
	if err := syncDir(j.vol.Dir); err != nil {
		return cdi.Outcome{Err: err, Details: details}
	}
	j.logf("extracted %d files, %d directories, %d symbolic links, %d hard links (%d bytes)", st.Files, st.Dirs, st.Symlinks, st.Links, st.Bytes)
	return cdi.Outcome{Details: details}
}

// extractArchive decompresses r when its first bytes say it is
// compressed, extracts the tar, then reads what follows the tar's end to
// the stream's end: a compressed stream's trailer (its checks), and the
// bytes the checksum covers.
func extractArchive(ctx context.Context, r io.Reader, dir string, logf func(string, ...any)) (untar.Stats, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(unpack.HeadSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return untar.Stats{}, err
	}
	var tr io.Reader = br
	if f := unpack.Detect(head); f != unpack.Raw {
		u, err := unpack.NewReader(br, unpack.Options{Format: f})
		if err != nil {
			return untar.Stats{}, err
		}
		defer u.Close()
		tr = u
	}
	st, err := untar.Extract(ctx, tr, dir, untar.Options{Logf: logf})
	if err != nil {
		return st, err
	}
	if _, err := io.Copy(io.Discard, tr); err != nil {
		return st, fmt.Errorf("after the archive's end: %w", err)
	}
	_, err = io.Copy(io.Discard, br)
	return st, err
}

// archiveMismatch is a checksum that differs: what was extracted goes
// (the volume's content, not the volume), as CDI's importer removes it,
// and the termination message says "checksum mismatch", which CDI does
// not retry.
func (j *importJob) archiveMismatch(err error, details *cdi.Details) cdi.Outcome {
	entries, rerr := os.ReadDir(j.vol.Dir)
	for _, e := range entries {
		if rerr == nil {
			rerr = os.RemoveAll(filepath.Join(j.vol.Dir, e.Name()))
		}
	}
	if rerr != nil {
		j.logf("cannot remove what was extracted: %v", rerr)
	}
	return cdi.Outcome{Err: fmt.Errorf("%w: %v", cdi.ErrChecksumMismatch, err), Details: details}
}

// openArchive opens the object with the copy's options, its ranges read
// over several connections.
func openArchive(ctx context.Context, t *cdi.Transfer, w copier.WebOptions) (*httpobj.Object, error) {
	h := httpobj.Options{Connections: w.Connections, CAFile: w.CAFile, Insecure: w.Insecure, Headers: w.Headers,
		Retries: w.Retries, StallTimeout: w.StallTimeout}
	if t.S3 == nil {
		return httpobj.Open(ctx, withUser(t.SrcURL, t.Username, t.Password), h)
	}
	return s3obj.Open(ctx, t.SrcURL, s3obj.Options{HTTP: h, Endpoint: w.S3Endpoint, Region: w.S3Region})
}

// archiveStream reads the object in order: ranges ahead of the reader
// when its server serves them, else its one stream.
func archiveStream(obj *httpobj.Object) (io.Reader, func()) {
	if obj.Ranges() && obj.Size() >= 0 {
		ra := stream.NewReadAhead(obj, obj.Size(), readAheadChunk, obj.Connections())
		return ra, func() { obj.Close(); ra.Close() }
	}
	st := obj.Stream()
	return st, func() { st.Close() }
}

// readAheadChunk is one range of an archive read ahead.
const readAheadChunk = 4 << 20

func describeObject(obj *httpobj.Object) string {
	if obj.Size() < 0 {
		return "size not said"
	}
	return fmt.Sprintf("%d bytes", obj.Size())
}

// progressReader feeds the endpoint as the archive is read: the bytes of
// the object read, of its size, as CDI counts.
type progressReader struct {
	r     io.Reader
	in    *stream.Counter
	job   *importJob
	total int64
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if p.total > 0 {
		p.job.metrics.SetProgress(p.in.Count(), p.total)
	}
	return n, err
}
