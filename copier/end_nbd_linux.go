package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/nbd"
	"github.com/ringcp/ringcp/nbdend"
)

// The kind of an NBD URI (nbd://host[:port]/export,
// nbd+unix:///export?socket=PATH, nbds:// and nbds+unix:// over TLS): an
// export served by qemu-nbd, qemu-storage-daemon or nbdkit, local or on
// another host, reached through package nbdend's Export, an engine.IOEnd.
// Prepare connects, over several connections where the server advertises
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

func init() { registerKind(endKind{name: "nbd", inspect: inspectExport}, nbd.Schemes()...) }

// exportEnd is what Prepare learned of an NBD end, and its connections,
// open until Run takes them (nil after).
type exportEnd struct {
	ep   *endpoint
	addr nbd.Address
	info nbd.Info
	peer nbd.Peer // who the first connection reached (end_nbd_same_linux.go)
	x    *nbdend.Export
	// served: who holds the server's listening socket on this host
	// (end_nbd_serves_linux.go).
	served serverHolders
}

// exportIdentity is an NBD export's identity kind: its URI and size are
// all a client can know of it (identity.nameDiffers).
const exportIdentity = "NBD export"

// inspectExport looks at an NBD URI by asking its server: an export DST
// of a resumable copy has its state set up too (resumeInPlace).
func inspectExport(p *Plan, uri string, r role) (*endpoint, error) {
	ep := &endpoint{path: uri, role: r, exists: true}
	e := &exportEnd{ep: ep}
	ep.end = e
	a, err := nbd.ParseURI(uri)
	if err != nil {
		// vsock, PSK, a bad URI: the message names it.
		kind := KindBadInput
		if errors.Is(err, nbd.ErrNotSupported) {
			kind = KindNotSupported
		}
		return ep, refuse(kind, "", err.Error()).on(r.field())
	}
	bitmap := ""
	if r == roleSrc {
		bitmap = p.opts.DirtyBitmap // a server without it refuses the handshake, naming it
	}
	x, err := dialExport(p.opts.NBD, uri, bitmap)
	if err != nil {
		return ep, refuseErr(exportKind(err), uri, "cannot open the NBD export", err).on(r.field())
	}
	e.addr, e.info, e.peer, e.x = a, x.Info(), x.Client().Peer(), x
	ep.geo = exportGeometry(uri, e.info)
	bs := e.info.BlockSize
	ep.endFacts = endFacts{what: "NBD export", fixedSize: true, ownIO: true, minAlign: int(bs.Min),
		// An export SRC is mapped with block status when the server has
		// it; zeros on an export DST are made in its preferred blocks,
		// which it zeroes without a read-modify-write.
		mapsHoles: e.info.BlockStatus, holeAlign: int(bs.Preferred),
		zeroUnit: int(bs.Preferred), zeroUnitWhat: "the NBD server's preferred block size"}
	if r == roleDst && p.opts.Resume && !p.readOnly {
		return ep, p.resumeInPlace("an NBD export")
	}
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

// dialExport connects to an export over up to o.Connections.
func dialExport(o NBDOptions, uri, bitmap string) (*nbdend.Export, error) {
	t, conns := o.Timeout, o.Connections
	if conns == 0 {
		conns = DefaultNBDConnections
	}
	opt := nbd.Options{Connections: conns, Timeout: t, DialTimeout: t, HandshakeTimeout: t, DirtyBitmap: bitmap}
	return nbdend.Dial(context.Background(), uri, opt)
}

// close releases the connections Prepare opened, when Run did not take
// them.
func (e *exportEnd) close() error {
	if e.x == nil {
		return nil
	}
	err := e.x.Close()
	e.x = nil
	return err
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

// checkAlone notes what the export is, and refuses an offset or a block
// size that is not a multiple of its minimum block size.
func (e *exportEnd) checkAlone(p *Plan) error {
	ep, o := e.ep, &p.opts
	off, field := o.SrcOffset, "SrcOffset"
	if ep.role == roleDst {
		off, field = o.DstOffset, "DstOffset"
	}
	p.note("%s: %s", ep.path, e.describe())
	bs := e.info.BlockSize
	switch {
	case off%int64(bs.Min) != 0:
		return refuse(KindBadInput, ep.path, fmt.Sprintf("Options.%s %d is not a multiple of the server's minimum block size %d", field, off, bs.Min)).on(field)
	case o.BlockSize != 0 && o.BlockSize%int(bs.Min) != 0:
		return refuse(KindBadInput, ep.path, fmt.Sprintf("Options.BlockSize %d is not a multiple of the server's minimum block size %d", o.BlockSize, bs.Min)).on("BlockSize")
	case o.BlockSize != 0 && o.BlockSize%int(bs.Preferred) != 0:
		p.note("%s: block size %d is not a multiple of the server's preferred block size %d: it may read-modify-write", ep.path, o.BlockSize, bs.Preferred)
	}
	return nil
}

// check refuses resuming from an NBD SRC: nothing tells whether an export
// changed between two runs, and a SRC that did would leave DST a mix of
// two disks that looks complete. It refuses a read-only export as DST,
// and one without FLUSH unless the copy needs no barrier (NoSync). A DST
// smaller than the range is checkDestSize's, the same export at both
// ends checkSameObject's.
func (e *exportEnd) check(p *Plan) error {
	o, ep := &p.opts, e.ep
	switch {
	case ep.role == roleSrc:
		if o.Resume {
			return refuse(KindNotSupported, ep.path, "Options.Resume cannot resume from an NBD export: nothing tells whether it changed between runs").on("Resume")
		}
		return nil
	case e.info.ReadOnly():
		return refuse(KindPermission, ep.path, "the NBD export is read-only").on("Dst")
	case !e.info.CanFlush() && !o.NoSync:
		return refuse(KindNotSupported, ep.path, "the NBD server does not offer FLUSH, so the copy could never be made durable (Options.NoSync copies without the barrier)").on("NoSync")
	}
	p.note("locks: DST is an NBD export: its server holds the locks on what it serves (qemu-nbd takes QEMU's)")
	return nil
}

// same says two ends may reach one export: one server (by the listening
// socket their connections reached) and one export name, or two names
// nothing tells apart (end_nbd_same_linux.go); or that o is a local file
// or device the export's server, on this host, holds open
// (end_nbd_serves_linux.go).
func (e *exportEnd) same(o *endpoint) (bool, string) {
	f, ok := o.end.(*exportEnd)
	if !ok {
		return e.servesLocal(o)
	}
	return e.sameWhy(f)
}

// overlap: which bytes of a local file its server serves as the export
// cannot be seen from here (same treats a file it holds open as the
// export).
func (e *exportEnd) overlap(byteRange, *endpoint, byteRange) *overlap { return nil }

// directObstacle: an export is not a descriptor (endFacts.canDirect is
// false); never asked.
func (e *exportEnd) directObstacle(*Plan, int64) string { return "" }

// uringObstacle: never asked of an end that moves its own bytes.
func (e *exportEnd) uringObstacle(string) string { return "" }

// identity is an export's URI and size.
func (e *exportEnd) identity() (identity, error) {
	return identity{Path: e.ep.path, Kind: exportIdentity, Size: e.info.Size}, nil
}

// space: an export takes none on a filesystem of ours.
func (e *exportEnd) space(*Plan) (dstSpace, bool) { return dstSpace{}, false }

// srcData is an NBD SRC's data: what block status does not call zeros,
// read over NBD to count zero blocks in it, as for a file.
func (e *exportEnd) srcData(p *Plan) (srcData, error) {
	o := &p.opts
	// A map of its own: the copy's starts with no answers cached.
	x := nbdend.NewExport(e.x.Client())
	var ext guard.Extents
	for off, end := o.SrcOffset, o.SrcOffset+p.Length; off < end; {
		start, stop, err := x.Data(off, end)
		if err != nil {
			return srcData{}, err
		}
		if stop > start {
			ext = append(ext, guard.Extent{Off: start, N: stop - start})
		}
		off = stop // past off: Data answers at least one extent
	}
	return srcData{ext: ext, read: x.Client(), how: " of SRC's data (NBD block status)"}, nil
}

// take hands the export's connections to a run, dialing them again for a
// plan run twice, and makes sure the server still answers, and still
// serves the export Prepare saw (the same size, flags and block sizes),
// before anything is written: a read of one block at its start, which
// changes nothing.
func (e *exportEnd) take(p *Plan, rep *Report) (*nbdend.Export, error) {
	x := e.x
	e.x = nil
	if x == nil {
		var err error
		if x, err = dialExport(p.opts.NBD, e.addr.URI, ""); err != nil { // the dirty ranges were read at Prepare
			return nil, refuseErr(exportKind(err), e.ep.path, "cannot open the NBD export", err)
		}
	}
	if err := probe(x); err != nil {
		x.Close()
		return nil, refuseErr(KindCheckFailed, e.ep.path, "the NBD server failed a first read of the export", err)
	}
	in, was := x.Info(), e.info
	if in.Size != was.Size || in.Flags != was.Flags || in.BlockSize != was.BlockSize {
		x.Close()
		return nil, refuse(KindChanged, e.ep.path, "the NBD export changed between checking and opening it (size, flags or block sizes)")
	}
	rep.note("%s: %d connection(s)", e.ep.path, in.Connections)
	if in.Note != "" {
		rep.note("%s: %s", e.ep.path, in.Note)
	}
	return x, nil
}

// probe reads one block at the export's start: a server gone since
// Prepare fails here, with nothing written.
func probe(x *nbdend.Export) error {
	in := x.Info()
	n := min(int64(in.BlockSize.Min), in.Size)
	if n == 0 {
		return nil
	}
	_, err := x.ReadAt(make([]byte, n), 0)
	return err
}

// open takes the export over to be read.
func (e *exportEnd) open(p *Plan, rep *Report) (*held, error) {
	x, err := e.take(p, rep)
	if err != nil {
		return nil, err
	}
	return &held{io: x, align: e.ep.alignment(), release: func() { x.Close() }}, nil
}

// lock: an export's server holds the locks on what it serves.
func (e *exportEnd) lock(*Plan, *held, *Report) error { return nil }

// openDst takes the export over to be written.
func (e *exportEnd) openDst(p *Plan, rep *Report) (target, error) {
	h, err := e.open(p, rep)
	if err != nil {
		return nil, err
	}
	return &exportTarget{end: e, h: h}, nil
}

// exportTarget is an NBD DST as Run holds it: written in place, never
// cut, synced by FLUSH.
type exportTarget struct {
	end    *exportEnd
	h      *held
	keepIt bool
}

var _ target = (*exportTarget)(nil)

func (t *exportTarget) held() *held                      { return t.h }
func (t *exportTarget) shape(*Plan, *engine.Job)         {}
func (t *exportTarget) cut(*Plan) error                  { return nil }
func (t *exportTarget) publish(*Plan, bool) error        { return nil }
func (t *exportTarget) discard() bool                    { return false }
func (t *exportTarget) keep(on bool)                     { t.keepIt = on }
func (t *exportTarget) kept() bool                       { return t.keepIt }
func (t *exportTarget) release()                         { t.h.close() }
func (t *exportTarget) identity(*Plan) (identity, error) { return t.end.identity() }

// left: what the server has of a stopped copy is its first
// Report.Contiguous bytes, if the FLUSH after the stop succeeded.
func (t *exportTarget) left(p *Plan, rep *Report) DstState {
	if !rep.Synced && !p.opts.NoSync {
		return DstUnknown
	}
	return DstPartial
}

// readBack: an NBD DST is read back from its server after the FLUSH: what
// the server serves now, every byte of the range read (its block status
// is not trusted to say where zeros are: endFacts.readBackMaps). What its
// own cache holds is the server's to keep honest, as for any NBD client.
func (t *exportTarget) readBack(*Plan) (string, error) {
	return "from the NBD server, after FLUSH", nil
}

// readerAt: an export reads at any offset, over the connections Prepare
// opened (an image format reads its header and tables through them).
func (e *exportEnd) readerAt() (io.ReaderAt, int64, func(), error) {
	if e.x == nil {
		return nil, 0, nil, errors.New("the export's connections are closed")
	}
	return e.x, e.info.Size, func() {}, nil
}
