package copier

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/nbd"
	"github.com/ringcp/ringcp/nbdend"
)

// SRC and DST may be NBD URIs (nbd://host[:port]/export,
// nbd+unix:///export?socket=PATH): an export served by qemu-nbd,
// qemu-storage-daemon or nbdkit, local or on another host. Prepare
// connects, over several connections where the server advertises
// CAN_MULTI_CONN, and looks at the export (size, block size constraints,
// read-only, FLUSH); Run copies over those same connections and closes
// them (Plan.Close does, for a plan never run). One session from check to
// copy is what a server for a single client expects: qemu-nbd without
// --persistent exits when its first client leaves, and without --shared
// serves one client at a time. An NBD DST is like a block device: never
// truncated, its zero ranges made zero with WRITE_ZEROES (or skipped with
// TargetIsZero), and synced only by a successful FLUSH. The checks of
// local files (mounts, locks, room, pseudo filesystems) do not apply to
// an export; what its server enforces (its own locks on the image it
// serves) does.

// exportEnd is what Prepare learned of an NBD end, and its connections,
// open until Run takes them (nil after).
type exportEnd struct {
	addr nbd.Address
	info nbd.Info
	peer nbd.Peer // who the first connection reached (sameexport_linux.go)
	x    *nbdend.Export
}

// local: the end is a file or device on this host, which the checks of
// package guard can look at.
func (ep *endpoint) local() bool { return ep.export == nil }

// exportAlign is an export's minimum block size, which every request's
// offset and length is a multiple of; 0 for a local end.
func (ep *endpoint) exportAlign() int {
	if ep.export == nil {
		return 0
	}
	return int(ep.export.info.BlockSize.Min)
}

// exportSparse applies the NBD ends' share of the sparse rules: an export
// SRC is mapped with block status when the server has it; zeros on an
// export DST are made in its preferred blocks, which it zeroes without a
// read-modify-write.
func (p *Plan) exportSparse() {
	if e := p.src.export; e != nil {
		p.sparse.MapHoles = e.info.BlockStatus
	}
	if e := p.dst.export; e != nil {
		p.sparse.HoleAlign = int(e.info.BlockSize.Preferred)
	}
}

// inspectEnd looks at SRC or DST (field "Src" or "Dst"): an NBD URI by
// asking its server, any other path with local.
func (p *Plan) inspectEnd(path, field string, local func(string) (endpoint, error)) (endpoint, error) {
	if !nbd.IsURI(path) {
		return local(path)
	}
	ep := endpoint{path: path, exists: true}
	a, err := nbd.ParseURI(path)
	if err != nil {
		// vsock, PSK, a bad URI: the message names it.
		kind := KindBadInput
		if errors.Is(err, nbd.ErrNotSupported) {
			kind = KindNotSupported
		}
		return ep, refuse(kind, "", err.Error()).on(field)
	}
	x, err := p.dialExport(path)
	if err != nil {
		return ep, refuseErr(exportKind(err), path, "cannot open the NBD export", err).on(field)
	}
	ep.export = &exportEnd{addr: a, info: x.Info(), peer: x.Client().Peer(), x: x}
	ep.geo = exportGeometry(path, x.Info())
	return ep, nil
}

// exportKind sorts why an export could not be opened: nobody at the
// address, or no such export there, is "not found"; a server that let us
// in but then failed or went silent is a check that could not be made.
func exportKind(err error) Kind {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return KindNotFound // no such host
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, nbd.ErrNoExport):
		return KindNotFound
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return KindPermission
	}
	return KindCheckFailed
}

// dialExport connects to an export over up to Options.NBD.Connections.
func (p *Plan) dialExport(uri string) (*nbdend.Export, error) {
	t, conns := p.opts.NBD.Timeout, p.opts.NBD.Connections
	if conns == 0 {
		conns = DefaultNBDConnections
	}
	opt := nbd.Options{Connections: conns, Timeout: t, DialTimeout: t, HandshakeTimeout: t}
	return nbdend.Dial(context.Background(), uri, opt)
}

// Close releases what a Plan holds open between Prepare and Run: the
// connections to its NBD ends. Run takes them over and closes them when
// it returns, so Close is for a plan that is not run; it is safe to call
// in any case, and more than once.
func (p *Plan) Close() error {
	var errs []error
	for _, ep := range []*endpoint{&p.src, &p.dst} {
		if e := ep.export; e != nil && e.x != nil {
			errs = append(errs, e.x.Close())
			e.x = nil
		}
	}
	return errors.Join(errs...)
}

// exportGeometry is what the block size choice needs of an export: its
// minimum block size as the alignment, the preferred one as the optimal
// request size, WRITE_ZEROES as a device's.
func exportGeometry(uri string, in nbd.Info) align.Geometry {
	bs := in.BlockSize
	g := align.Geometry{Path: uri, Size: in.Size, MemAlign: 1, OffsetAlign: int(bs.Min),
		OptimalIO: int(bs.Preferred), MaxIO: int(bs.Max)}
	if in.CanZero() {
		g.WriteZeroesMax = 1 << 30
	}
	how := "sent by the server"
	if !bs.Advertised {
		how = "the protocol's defaults: the server sent none"
	}
	g.Notes = append(g.Notes, fmt.Sprintf("block sizes %d/%d/%d (%s)", bs.Min, bs.Preferred, bs.Max, how))
	return g
}

// describe is one line on an export for the notes.
func (e *exportEnd) describe() string {
	in := e.info
	var has []string
	for _, f := range []struct {
		on   bool
		name string
	}{{in.ReadOnly(), "read-only"}, {in.CanFlush(), "flush"}, {in.CanZero(), "write zeroes"},
		{in.CanFastZero(), "fast zero"}, {in.BlockStatus, "block status"}, {in.CanMultiConn(), "multi-conn"}} {
		if f.on {
			has = append(has, f.name)
		}
	}
	bs := in.BlockSize
	line := fmt.Sprintf("NBD export of %d bytes, block sizes %d/%d/%d (min/preferred/max), offers: %s", in.Size, bs.Min, bs.Preferred, bs.Max, strings.Join(has, ", "))
	switch t := e.addr.TLS; {
	case t == nil:
		return line + "; in the clear"
	case !t.Verify:
		return line + "; over TLS, the server's certificate NOT checked (tls-verify-peer=0)"
	}
	return line + "; over TLS, the server's certificate checked for " + e.addr.TLS.ServerName
}

// checkExports refuses what an NBD end cannot do: an offset or a block
// size that is not a multiple of its minimum block size, a read-only DST, and a DST without FLUSH
// unless the copy needs no barrier (NoSync). A DST smaller than the range
// is checkDestSize's, the same export at both ends checkSameObject's.
func (p *Plan) checkExports() error {
	sides := []struct {
		ep    *endpoint
		off   int64
		field string
	}{{&p.src, p.opts.SrcOffset, "SrcOffset"}, {&p.dst, p.opts.DstOffset, "DstOffset"}}
	for _, s := range sides {
		ep := s.ep
		if ep.export == nil {
			continue
		}
		p.note("%s: %s", ep.path, ep.export.describe())
		bs := ep.export.info.BlockSize
		switch {
		case s.off%int64(bs.Min) != 0:
			return refuse(KindBadInput, ep.path, fmt.Sprintf("Options.%s %d is not a multiple of the server's minimum block size %d", s.field, s.off, bs.Min)).on(s.field)
		case p.opts.BlockSize != 0 && p.opts.BlockSize%int(bs.Min) != 0:
			return refuse(KindBadInput, ep.path, fmt.Sprintf("Options.BlockSize %d is not a multiple of the server's minimum block size %d", p.opts.BlockSize, bs.Min)).on("BlockSize")
		case p.opts.BlockSize != 0 && p.opts.BlockSize%int(bs.Preferred) != 0:
			p.note("%s: block size %d is not a multiple of the server's preferred block size %d: it may read-modify-write", ep.path, p.opts.BlockSize, bs.Preferred)
		}
	}
	return p.checkExportDst()
}

// checkExportDst refuses a read-only export as DST, one without FLUSH
// unless the copy needs no barrier, and resuming from an NBD SRC: nothing
// tells whether an export changed between two runs, and a SRC that did
// would leave DST a mix of two disks that looks complete.
func (p *Plan) checkExportDst() error {
	o, dst := &p.opts, p.dst.export
	switch {
	case o.Resume && p.src.export != nil:
		return refuse(KindNotSupported, p.src.path, "Options.Resume cannot resume from an NBD export: nothing tells whether it changed between runs").on("Resume")
	case dst == nil:
	case dst.info.ReadOnly():
		return refuse(KindPermission, p.dst.path, "the NBD export is read-only").on("Dst")
	case !dst.info.CanFlush() && !o.NoSync:
		return refuse(KindNotSupported, p.dst.path, "the NBD server does not offer FLUSH, so the copy could never be made durable (Options.NoSync copies without the barrier)").on("NoSync")
	}
	return nil
}

// sameExport tells, where an end is an NBD export, whether a and b are one
// export (told is false when both are local: guard's identities decide).
func sameExport(a, b *endpoint) (same, told bool) {
	if a.local() && b.local() {
		return false, false
	}
	return sameObject(a, b), true
}

// openExports takes the NBD ends' connections over from Prepare (or, for
// a plan run again, connects anew), and makes sure each server still
// answers, and still serves the export Prepare saw (the same size, flags
// and block sizes), before anything is written: a read of one block at
// its start, which changes nothing.
func (p *Plan) openExports(rep *Report) (engine.Ends, error) {
	var ends engine.Ends
	for _, s := range []struct {
		ep *endpoint
		id engine.FileID
	}{{&p.src, engine.FileSrc}, {&p.dst, engine.FileDst}} {
		if s.ep.export == nil {
			continue
		}
		x, err := s.ep.export.take(p)
		if err != nil {
			closeExports(ends)
			return ends, refuseErr(exportKind(err), s.ep.path, "cannot open the NBD export", err)
		}
		ends[s.id] = x
		if err := probe(x); err != nil {
			closeExports(ends)
			return ends, refuseErr(KindCheckFailed, s.ep.path, "the NBD server failed a first read of the export", err)
		}
		in, was := x.Info(), s.ep.export.info
		if in.Size != was.Size || in.Flags != was.Flags || in.BlockSize != was.BlockSize {
			closeExports(ends)
			return ends, refuse(KindChanged, s.ep.path, "the NBD export changed between checking and opening it (size, flags or block sizes)")
		}
		rep.note("%s: %d connection(s)", s.ep.path, in.Connections)
		if in.Note != "" {
			rep.note("%s: %s", s.ep.path, in.Note)
		}
	}
	return ends, nil
}

// take hands the export's connections to a run, dialing them again for a
// plan run twice.
func (e *exportEnd) take(p *Plan) (*nbdend.Export, error) {
	x := e.x
	e.x = nil
	if x != nil {
		return x, nil
	}
	return p.dialExport(e.addr.URI)
}

// probe reads one block at the export's start: a server gone since
// Prepare fails here, with nothing written.
func probe(x *nbdend.Export) error {
	in := x.Info()
	n := min(int64(in.BlockSize.Min), in.Size)
	if n == 0 {
		return nil
	}
	_, err := x.Client().ReadAt(make([]byte, n), 0)
	return err
}

// closeExports closes the exports a copy opened.
func closeExports(ends engine.Ends) {
	for _, e := range ends {
		if x, ok := e.(*nbdend.Export); ok {
			x.Close()
		}
	}
}

// exportRoom is roomNeeded for an NBD SRC: its data is what block status
// does not call zeros; when that does not fit, zero blocks in it are
// counted by reading it (or samples of it) over NBD, as for a file.
func (p *Plan) exportRoom(free int64) (room, error) {
	o := &p.opts
	// A map of its own: the copy's starts with no answers cached.
	x := nbdend.NewExport(p.src.export.x.Client())
	var ext guard.Extents
	for off, end := o.SrcOffset, o.SrcOffset+p.Length; off < end; {
		start, stop, err := x.Data(off, end)
		if err != nil {
			return room{}, err
		}
		if stop > start {
			ext = append(ext, guard.Extent{Off: start, N: stop - start})
		}
		off = stop // past off: Data answers at least one extent
	}
	data := ext.Bytes()
	if data <= free || p.sparse.ZeroBlock == 0 || data == 0 {
		return room{need: data, how: " of SRC's data (NBD block status)"}, nil
	}
	return nonZeroRoom(x.Client(), ext, data, p.sparse.ZeroBlock)
}
