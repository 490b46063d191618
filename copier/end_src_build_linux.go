package copier

import (
	"errors"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/qcow2"
	"github.com/ringcp/ringcp/stream"
	"github.com/ringcp/ringcp/unpack"
)

// rawSource is a SRC's bytes as published, before any decoding: what a
// kind (an HTTP or S3 object, a stream, a local compressed file) hands
// to buildSrc, which decides from its first bytes how it is copied.
type rawSource struct {
	name string
	size int64 // -1: not known before its end
	// at reads it at any offset, in parallel; nil for a stream.
	at io.ReaderAt
	// head is its first bytes (unpack.HeadSize, fewer when it is
	// shorter), read by the kind without losing them.
	head []byte
	// open starts reading it in order from its start, for one run (a
	// stream's second run fails).
	open func() (r io.Reader, close func(), err error)
	// stop, when not nil, makes the reads of it in flight and after fail
	// at once (Run's context ended); nil where reads never wait long (a
	// local file).
	stop func()
	// transport names how its bytes come ("http", "s3", "stdin"...), in
	// engine.IOInfo; detail says more, for -v.
	transport, detail string
}

// srcKind is what the kind knows of its SRC for a resume state and the
// messages.
type srcKind struct {
	what        string // "HTTP object", "stream"...
	ident       identity
	resumable   bool
	unresumable string // why not, when "read once" is not why
	release     func() error
	// watch, when not nil, records the file the bytes come from as it
	// is when the run opens the end, to be checked at its end (a local
	// compressed file: srcchanged_linux.go); nil for what keeps no
	// marks (a stream, an object, whose ETag a resume compares).
	watch func() (*srcFile, error)
}

// buildSrc makes the endpoint of a SRC that moves its own bytes from its
// raw bytes: read at offsets when it can be and is not compressed; read
// in order, through the decompressor when its first bytes say it is
// compressed (unless Options.SrcFormat is raw).
func buildSrc(p *Plan, ep *endpoint, raw rawSource, k srcKind) (*endpoint, error) {
	o := &p.opts
	format := unpack.Detect(raw.head)
	switch f, ok := unpack.ParseFormat(o.SrcFormat); {
	case o.SrcFormat == SrcFormatRaw:
		format = unpack.Raw
	case ok && f != unpack.Auto && f != format:
		return ep, refuse(KindBadInput, ep.path, fmt.Sprintf("Options.SrcFormat says %s, SRC's first bytes say %s", f, format)).on("SrcFormat")
	}
	s := &srcEnd{ep: ep, ident: k.ident, resumable: k.resumable, unresumable: k.unresumable, release: k.release, watch: k.watch}
	ep.end = s
	ep.endFacts = srcFacts(k.what)
	if err := refuseStreamImage(p, ep, raw); err != nil {
		return ep, err
	}
	size, why := raw.size, ""
	if format != unpack.Raw {
		if err := refusePackedImage(p, ep, raw, format); err != nil {
			return ep, err
		}
		ep.what = format.String() + "-compressed " + k.what
		var err error
		if size, why, err = unpackedSize(raw, format); err != nil {
			return ep, refuseErr(KindImageFormat, ep.path, "cannot size SRC", err).on("Src")
		}
	}
	s.seq = format != unpack.Raw || raw.at == nil
	s.describe = describeSrc(raw, format, size, why)
	switch {
	case size >= 0:
	case o.SrcSize > 0:
		size = o.SrcSize
		s.describe += fmt.Sprintf("; Options.SrcSize announces %d bytes: a SRC that ends elsewhere fails the copy", size)
	case o.LengthSet:
		size = o.SrcOffset + o.Length
		s.describe += fmt.Sprintf("; Options.Length copies its first %d bytes: a SRC that ends before fails the copy", size)
	default:
		ep.openEnded, size = true, openEndCap
	}
	ep.geo = srcGeometry(ep.path, size, srcOptimal(s.seq))
	var expect *expectsum.Expect
	if o.ExpectChecksum != "" {
		e, _ := expectsum.Parse(o.ExpectChecksum) // normalize checked it
		expect = &e
	}
	if !s.seq {
		s.take = func(p *Plan, rep *Report) (*srcIO, error) { return takeObject(p, raw, expect), nil }
		return ep, nil
	}
	s.take = func(p *Plan, rep *Report) (*srcIO, error) { return takeStream(p, raw, format, expect, ep.openEnded) }
	return ep, nil
}

// srcOptimal is the request size a SRC of this sort prefers: a range
// request of a few MiB keeps a connection streaming; a stream is read in
// whatever blocks the engine wants.
func srcOptimal(seq bool) int {
	if seq {
		return 0
	}
	return 4 << 20
}

// unpackedSize is what a compressed SRC decompresses to, when it says:
// an xz file read at offsets tells in its index; -1 otherwise, with why.
// An index larger than ringcp reads is refused (err): it would not be
// read while decoding either.
func unpackedSize(raw rawSource, f unpack.Format) (int64, string, error) {
	if f != unpack.Xz || raw.at == nil || raw.size < 0 {
		return -1, f.String() + " does not say its size before its end", nil
	}
	n, err := unpack.XzSize(raw.at, raw.size)
	var big *unpack.IndexTooLargeError
	switch {
	case errors.As(err, &big):
		return -1, "", err
	case err != nil:
		return -1, fmt.Sprintf("its xz index could not be read (%v)", err), nil
	}
	return n, "", nil
}

func describeSrc(raw rawSource, f unpack.Format, size int64, why string) string {
	line := raw.detail
	if f != unpack.Raw {
		line += fmt.Sprintf("; %s-compressed, decompressed on the fly", f)
		if size >= 0 {
			line += fmt.Sprintf(" to %s (%d bytes)", units.Format(size), size)
		} else {
			line += ": " + why
		}
	}
	return line
}

// takeObject is an object read in parallel ranges.
func takeObject(p *Plan, raw rawSource, expect *expectsum.Expect) *srcIO {
	x := &objectIO{obj: namedAt{raw.at, raw.name}, info: engine.IOInfo{Transport: raw.transport, Detail: raw.detail}}
	io := &srcIO{io: x, close: func() {}, cause: x.met, interrupt: raw.stop}
	if expect != nil {
		x.sum = newExpectRanges(*expect, raw.size, p.QueueDepth, p.BlockSize)
		io.done, io.close = x.sum.verify, x.sum.abort
	}
	return io
}

// namedAt is a ReaderAt with the name errors give it.
type namedAt struct {
	io.ReaderAt
	name string
}

func (n namedAt) Name() string { return n.name }

// Prefetch passes an image's announcement on to the bytes beneath.
func (n namedAt) Prefetch(r []qcow2.Range) { prefetchOn(n.ReaderAt, r) }

// takeStream is a SRC read in order: its bytes hashed as they pass when
// there is a digest to check, counted, decompressed unless raw.
func takeStream(p *Plan, raw rawSource, f unpack.Format, expect *expectsum.Expect, openEnded bool) (*srcIO, error) {
	r, closeRaw, err := raw.open()
	if err != nil {
		return nil, refuseErr(KindCheckFailed, raw.name, "cannot read", err)
	}
	var hashed *expectsum.Reader
	if expect != nil {
		hashed = expectsum.NewReader(r, *expect)
		r = hashed
	}
	counted := stream.NewCounter(r)
	x := &seqIO{name: raw.name, r: counted, openEnded: openEnded}
	x.info = engine.IOInfo{Transport: raw.transport, Detail: raw.detail, Sequential: true}
	io := &srcIO{io: x, stream: x, close: closeRaw, cause: x.met, interrupt: raw.stop}
	var unpacked *unpack.Reader
	if f != unpack.Raw {
		if unpacked, err = unpack.NewReader(counted, unpack.Options{Format: f, Threads: p.opts.Stream.Threads}); err != nil {
			closeRaw()
			return nil, refuseErr(KindCheckFailed, raw.name, "cannot decompress", err)
		}
		x.r = unpacked
		x.info.Transport += "+" + f.String()
		io.in = counted.Count
		io.close = func() { closeRaw(); unpacked.Close() }
	}
	whole := !p.opts.LengthSet
	io.done = func() error { return finishStream(x, unpacked, hashed, whole && !openEnded) }
	if !whole && unpacked != nil {
		// A range of a compressed SRC: its bytes are only known good
		// once the checks after them held (an xz block's CRC64, a gzip
		// member's CRC32), so the rest is decoded, through its end.
		io.done = func() error {
			if err := drainChecked(x, p.opts.SrcSize); err != nil {
				return err
			}
			return finishStream(x, unpacked, hashed, false)
		}
	}
	return io, nil
}

// finishStream is what a copy that read a stream's range does before it
// succeeds: a SRC read whole is read to its true end, which checks that
// it holds no more than its size (its own, or Options.SrcSize) and, when
// compressed, its trailer (the checksums at the end of a gzip member, an
// xz index); then the digest of the published bytes is compared.
func finishStream(x *seqIO, unpacked *unpack.Reader, hashed *expectsum.Reader, whole bool) error {
	if whole {
		var one [1]byte
		n, err := readFull(x.r, one[:])
		switch {
		case n > 0:
			return fmt.Errorf("%s holds more than the %d bytes its size says", x.name, x.pos.Load())
		case !errors.Is(err, io.EOF):
			return fmt.Errorf("%s: at its end: %w", x.name, err)
		}
	}
	if hashed == nil {
		return nil
	}
	// The rest through the decompressor, to its end (its goroutines read
	// ahead of it: only it may read the source), then whatever follows.
	if _, err := io.Copy(io.Discard, x.r); err != nil {
		return fmt.Errorf("%s: reading the rest for its checksum: %w", x.name, err)
	}
	if _, err := io.Copy(io.Discard, hashed); err != nil {
		return fmt.Errorf("%s: reading the rest for its checksum: %w", x.name, err)
	}
	return hashed.Verify()
}

// drainChecked decodes what is left of a compressed stream, through its
// end: its checks and trailer; and, when Options.SrcSize announced its
// size (size > 0), checks that it ends there, as a whole copy's
// finishStream does: a SRC that ends elsewhere fails the copy.
func drainChecked(x *seqIO, size int64) error {
	n, err := io.Copy(io.Discard, x.r)
	if err != nil {
		return fmt.Errorf("%s: past the range, its checks: %w", x.name, err)
	}
	if end := x.pos.Load() + n; size > 0 && end != size {
		return fmt.Errorf("%s ends at %d bytes, not at the %d its size says", x.name, end, size)
	}
	return nil
}

// dataRange is one extent of data, [off, off+n), or none.
func dataRange(off, n int64) guard.Extents {
	if n == 0 {
		return nil
	}
	return guard.Extents{{Off: off, N: n}}
}
