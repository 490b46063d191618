package nbd

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
)

// negotiated is what the handshake settled.
type negotiated struct {
	export     exportInfo
	block      BlockSize // as advertised; zero when not
	structured bool
	contexts   contextIDs
}

// contextIDs are the ids the server gave the metadata contexts it
// selected, by ctxAllocation and ctxBitmap. They are per connection.
type contextIDs struct {
	id  [numContexts]uint32
	has [numContexts]bool
}

// index finds the context the server numbered id.
func (c contextIDs) index(id uint32) (int, bool) {
	for k := range c.id {
		if c.has[k] && c.id[k] == id {
			return k, true
		}
	}
	return 0, false
}

// handshake runs the fixed newstyle negotiation (proto.md, "Handshake"):
// NBD_OPT_STRUCTURED_REPLY, NBD_OPT_SET_META_CONTEXT base:allocation (and
// qemu:dirty-bitmap:NAME when Options.DirtyBitmap asks for it), then
// NBD_OPT_GO with an NBD_INFO_BLOCK_SIZE request, falling back to
// NBD_OPT_EXPORT_NAME only when the server lacks NBD_OPT_GO. Oldstyle
// servers are refused (nbd-server dropped them in 3.10; qemu and nbdkit
// speak newstyle).
type handshake struct {
	nc       net.Conn // the connection; a *tls.Conn once TLS started
	tls      *tls.Config
	r        *bufio.Reader
	name     string
	opt      Options
	noZeroes bool
	out      negotiated
}

func (h *handshake) run() (negotiated, error) {
	fixed, err := h.greeting()
	if err != nil {
		return h.out, err
	}
	if h.tls != nil {
		if !fixed {
			return h.out, fmt.Errorf("the server does not speak the fixed newstyle handshake, so it cannot start TLS")
		}
		if err := h.startTLS(); err != nil {
			return h.out, err
		}
		out, err := h.negotiate(fixed)
		return out, tlsHangup(err)
	}
	return h.negotiate(fixed)
}

// negotiate runs the options after the greeting (and TLS).
func (h *handshake) negotiate(fixed bool) (negotiated, error) {
	if !fixed {
		// Plain newstyle knows only NBD_OPT_EXPORT_NAME.
		return h.out, h.exportName()
	}
	if !h.opt.NoStructuredReplies {
		if err := h.structured(); err != nil {
			return h.out, err
		}
	}
	if h.out.structured && len(h.queries()) > 0 {
		if err := h.metaContext(); err != nil {
			return h.out, err
		}
	}
	if err := h.checkBitmap(); err != nil {
		return h.out, err
	}
	if h.opt.forceExportName {
		return h.out, h.exportName()
	}
	return h.out, h.goOption()
}

// greeting reads NBDMAGIC, IHAVEOPT and the handshake flags, and answers
// with the client flags.
func (h *handshake) greeting() (fixed bool, err error) {
	var b [18]byte
	if _, err := io.ReadFull(h.r, b[:16]); err != nil {
		return false, readErr("the greeting", err)
	}
	if m := be.Uint64(b[:]); m != magicInit {
		return false, protoErrorf("greeting magic 0x%x, want NBDMAGIC (is this an NBD server?)", m)
	}
	switch m := be.Uint64(b[8:]); m {
	case magicOpt:
	case magicOldstyle:
		return false, fmt.Errorf("server speaks the oldstyle handshake, which is not supported")
	default:
		return false, protoErrorf("greeting magic 0x%x, want IHAVEOPT", m)
	}
	if _, err := io.ReadFull(h.r, b[16:18]); err != nil {
		return false, readErr("the handshake flags", err)
	}
	flags := be.Uint16(b[16:])
	var client uint32
	if flags&flagFixedNewstyle != 0 {
		client |= flagCFixedNewstyle
	}
	if flags&flagNoZeroes != 0 {
		client |= flagCNoZeroes
		h.noZeroes = true
	}
	if _, err := h.nc.Write(be.AppendUint32(nil, client)); err != nil {
		return false, err
	}
	return flags&flagFixedNewstyle != 0, nil
}

func (h *handshake) structured() error {
	r, msg, err := h.option(optStructured, nil)
	if err != nil {
		return err
	}
	switch {
	case r.typ == repAck:
		h.out.structured = true
	case r.typ&repFlagError != 0:
		// The server lacks them or refuses them: simple replies.
		return fatalOptError(r, msg)
	default:
		return protoErrorf("reply type 0x%x to NBD_OPT_STRUCTURED_REPLY", r.typ)
	}
	return nil
}

// queries are the metadata contexts to select: base:allocation unless
// Options.NoBlockStatus, and the dirty bitmap Options names.
func (h *handshake) queries() []string {
	var q []string
	if !h.opt.NoBlockStatus {
		q = append(q, metaContextAllocation)
	}
	if h.opt.DirtyBitmap != "" {
		q = append(q, metaContextBitmap+h.opt.DirtyBitmap)
	}
	return q
}

// metaContext selects every query in one NBD_OPT_SET_META_CONTEXT (each
// one replaces the selection before it) and records the ids of those
// the server selected; it may select fewer, or none.
func (h *handshake) metaContext() error {
	if err := h.send(optSetMetaContext, metaData(h.name, h.queries()...)); err != nil {
		return err
	}
	for {
		r, p, err := h.reply(optSetMetaContext)
		if err != nil {
			return err
		}
		switch {
		case r.typ == repAck:
			return nil
		case r.typ == repMetaContext:
			id, name, err := parseMetaContext(p)
			if err != nil {
				return err
			}
			h.selected(id, name)
		case r.typ&repFlagError != 0:
			// The spec: a failed option selects nothing. Without
			// base:allocation the copy treats everything as data; a
			// missing bitmap is refused by checkBitmap.
			h.out.contexts = contextIDs{}
			return fatalOptError(r, string(p))
		default:
			return protoErrorf("reply type 0x%x to NBD_OPT_SET_META_CONTEXT", r.typ)
		}
	}
}

// selected records a context the server selected; names we did not ask
// for are ignored.
func (h *handshake) selected(id uint32, name string) {
	k := -1
	switch {
	case name == metaContextAllocation && !h.opt.NoBlockStatus:
		k = ctxAllocation
	case h.opt.DirtyBitmap != "" && name == metaContextBitmap+h.opt.DirtyBitmap:
		k = ctxBitmap
	}
	if k >= 0 {
		h.out.contexts.id[k], h.out.contexts.has[k] = id, true
	}
}

func (h *handshake) goOption() error {
	if err := h.send(optGo, goData(h.name, infoBlockSize)); err != nil {
		return err
	}
	gotExport := false
	for {
		r, p, err := h.reply(optGo)
		if err != nil {
			return err
		}
		switch r.typ {
		case repInfo:
			got, err := parseInfo(p, &h.out.export, &h.out.block)
			if err != nil {
				return err
			}
			gotExport = gotExport || got
		case repAck:
			if !gotExport {
				return protoErrorf("NBD_OPT_GO acknowledged without NBD_INFO_EXPORT")
			}
			return nil
		case repErrUnsup:
			return h.exportName()
		default:
			return h.goError(r, string(p))
		}
	}
}

func (h *handshake) goError(r optReply, msg string) error {
	switch r.typ {
	case repErrUnknown:
		return fmt.Errorf("%w: the server has no export %q%s", ErrNoExport, h.name, suffix(msg))
	case repErrBlockSize:
		return protoErrorf("NBD_REP_ERR_BLOCK_SIZE_REQD although we asked for NBD_INFO_BLOCK_SIZE")
	}
	if r.typ&repFlagError == 0 {
		return protoErrorf("reply type 0x%x to NBD_OPT_GO", r.typ)
	}
	if err := fatalOptError(r, msg); err != nil {
		return err
	}
	return fmt.Errorf("the server refused export %q: %s%s", h.name, repName(r.typ), suffix(msg))
}

// exportName ends the negotiation the old way: the server answers with
// the size and flags, or hangs up when it has no such export.
func (h *handshake) exportName() error {
	if err := h.send(optExportName, []byte(h.name)); err != nil {
		return err
	}
	n := 10
	if !h.noZeroes {
		n += 124
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(h.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the server hung up on NBD_OPT_EXPORT_NAME (no export %q?)", h.name)
		}
		return readErr("the NBD_OPT_EXPORT_NAME reply", err)
	}
	h.out.export = exportInfo{size: be.Uint64(b), flags: be.Uint16(b[8:])}
	return nil
}

// option sends one option and reads its single reply.
func (h *handshake) option(opt uint32, data []byte) (optReply, string, error) {
	if err := h.send(opt, data); err != nil {
		return optReply{}, "", err
	}
	r, p, err := h.reply(opt)
	return r, string(p), err
}

func (h *handshake) send(opt uint32, data []byte) error {
	_, err := h.nc.Write(appendOption(nil, opt, data))
	return err
}

// reply reads one option reply to opt and its payload.
func (h *handshake) reply(opt uint32) (optReply, []byte, error) {
	var b [optReplyHeadLen]byte
	if _, err := io.ReadFull(h.r, b[:]); err != nil {
		return optReply{}, nil, readErr(fmt.Sprintf("the reply to option %d", opt), err)
	}
	r, err := parseOptReply(b[:])
	if err != nil {
		return r, nil, err
	}
	if r.opt != opt {
		return r, nil, protoErrorf("reply to option %d while option %d was asked", r.opt, opt)
	}
	p := make([]byte, r.length)
	if _, err := io.ReadFull(h.r, p); err != nil {
		return r, nil, readErr(fmt.Sprintf("the reply to option %d", opt), err)
	}
	return r, p, nil
}

// fatalOptError turns the option errors that end the negotiation into
// errors; others (unsupported, policy...) return nil: the option is
// simply not in force.
func fatalOptError(r optReply, msg string) error {
	switch r.typ {
	case repErrTLSReqd:
		return fmt.Errorf("the server requires TLS: name it with nbds:// or nbds+unix://%s", suffix(msg))
	case repErrShutdown:
		return fmt.Errorf("the server is shutting down%s", suffix(msg))
	case repErrExtHeadReqd:
		return fmt.Errorf("the server requires extended headers, which are not supported%s", suffix(msg))
	}
	return nil
}

func repName(t uint32) string {
	switch t {
	case repErrUnsup:
		return "NBD_REP_ERR_UNSUP"
	case repErrPolicy:
		return "NBD_REP_ERR_POLICY"
	case repErrInvalid:
		return "NBD_REP_ERR_INVALID"
	case repErrPlatform:
		return "NBD_REP_ERR_PLATFORM"
	case repErrTooBig:
		return "NBD_REP_ERR_TOO_BIG"
	}
	return fmt.Sprintf("error 0x%x", t)
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (server says: " + msg + ")"
}

// readErr names what was being read when the stream broke.
func readErr(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the server closed the connection while sending %s (%w)", ErrProtocol, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}
