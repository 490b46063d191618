package copier

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ringcp/ringcp/stream"
	"github.com/ringcp/ringcp/unpack"
	"golang.org/x/sys/unix"
)

// The kind of "-", standard input, and of a named pipe given as SRC: a
// stream read once, in order, by the engine's pool on one goroutine
// (engine.IOInfo.Sequential). Its size is not known before its end
// unless Options.Length announces it (end_src_size_linux.go); a
// compressed stream is decompressed on the fly. Standard input that is a
// regular file or a block device (ringcp - DST < disk.img) is that file,
// read at offsets as any other. A copy from a stream cannot be resumed.
// "-" as DST is standard output (end_stdout_linux.go): one kind, one
// operand, both directions.
//
// A local file whose first bytes say it is compressed is read in order
// through the decompressor too (inspectLocalSrc), unless Options.SrcFormat
// is raw.

func init() { registerKind(endKind{name: "stream", inspect: inspectStdin}, streamOperand) }

// inspectStdin looks at "-": Options.Stream.Stdin, else the process's
// standard input.
func inspectStdin(p *Plan, operand string, r role) (*endpoint, error) {
	if r == roleDst {
		return inspectStdout(p, operand) // end_stdout_linux.go
	}
	ep := &endpoint{path: operand, role: r, exists: true}
	ep.end = &srcEnd{ep: ep}
	ep.endFacts = srcFacts("stream")
	if in := p.opts.Stream.Stdin; in != nil {
		return inspectPipe(p, ep, "stdin", in, func() {}, nil)
	}
	pipe, err := stream.Stdin()
	if err != nil {
		return ep, refuseErr(KindCheckFailed, "", "cannot look at standard input", err).on("Src")
	}
	if !pipe.Sequential() {
		// A file or a disk behind "<": read it as one, at offsets.
		return inspectFile(p, "/dev/stdin", r)
	}
	return inspectPipe(p, ep, "stdin", pipe, func() { pipe.Close() }, pipe.Interrupt)
}

// inspectPipe peeks at a stream's first bytes, which the run reads again,
// and hands it to buildSrc; stop, when not nil, interrupts its reads.
func inspectPipe(p *Plan, ep *endpoint, name string, in io.Reader, closeIt, stop func()) (*endpoint, error) {
	if err := refuseStreamOptions(p, ep); err != nil {
		closeIt()
		return ep, err
	}
	br := bufio.NewReaderSize(in, 1<<20)
	head, err := br.Peek(unpack.HeadSize)
	if err != nil && !errors.Is(err, io.EOF) {
		closeIt()
		return ep, refuseErr(KindCheckFailed, name, "cannot read the first bytes", err).on("Src")
	}
	raw := rawSource{name: name, size: -1, head: head, open: onceReader(br, closeIt), stop: stop, transport: "stream",
		detail: "a stream, read once in order"}
	k := srcKind{what: "stream", ident: identity{Path: name, Kind: "stream"},
		release: func() error { closeIt(); return nil }}
	return buildSrc(p, ep, raw, k)
}

// refuseStreamOptions refuses what the options alone refuse of a stream,
// before it is opened or read (a FIFO's open, a first read wait for its
// writer).
func refuseStreamOptions(p *Plan, ep *endpoint) error {
	switch o := &p.opts; {
	case o.Resume:
		return refuseResume(ep)
	case o.SrcSize == 0 && !o.LengthSet && (o.Verify || o.Checksum != nil):
		return refuseOpenEnded(p, ep, "verification and checksums need the length of the range")
	}
	return nil
}

// inspectLocalSrc is the file kind's SRC when it is no plain file: a
// FIFO is a stream, a regular file whose first bytes say it is
// compressed is read through the decompressor. ok is false for anything
// else (the file kind looks at it).
func inspectLocalSrc(p *Plan, path string) (ep *endpoint, err error, ok bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil, nil, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		ep = &endpoint{path: path, role: roleSrc, exists: true}
		ep.end = &srcEnd{ep: ep}
		ep.endFacts = srcFacts("stream")
		if err := refuseStreamOptions(p, ep); err != nil {
			return ep, err, true
		}
		pipe, err := stream.OpenPipe(path)
		if err != nil {
			return ep, refuseOpen(path, err).on("Src"), true
		}
		ep, err = inspectPipe(p, ep, path, pipe, func() { pipe.Close() }, pipe.Interrupt)
		return ep, err, true
	case unix.S_IFREG:
		if p.opts.SrcFormat == SrcFormatRaw {
			return nil, nil, false
		}
		return inspectPackedFile(p, path, st)
	}
	return nil, nil, false
}

// inspectPackedFile reads a regular file's first bytes; a compressed one
// is decompressed on the fly.
func inspectPackedFile(p *Plan, path string, st unix.Stat_t) (*endpoint, error, bool) {
	f, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return nil, nil, false // the file kind says why
	}
	head := make([]byte, unpack.HeadSize)
	n, _ := f.ReadAt(head, 0)
	if unpack.Detect(head[:n]) == unpack.Raw {
		f.Close()
		return nil, nil, false
	}
	ep := &endpoint{path: path, role: roleSrc, exists: true}
	raw := rawSource{name: path, size: st.Size, at: f, head: head[:n], transport: "file",
		detail: fmt.Sprintf("a file of %d bytes", st.Size),
		open: func() (io.Reader, func(), error) {
			return bufio.NewReaderSize(io.NewSectionReader(f, 0, st.Size), 1<<20), func() {}, nil
		}}
	k := srcKind{what: "file", resumable: true, release: f.Close,
		ident: identity{Path: path, Kind: "compressed file", Size: st.Size, Dev: st.Dev, Ino: st.Ino,
			Marks: &marks{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}},
		watch: func() (*srcFile, error) { return watchSrc(f, path, 0, "SRC "+path) }}
	ep, err = buildSrc(p, ep, raw, k)
	return ep, err, true
}
