package nbd

import "time"

// BlockSize is the server's size constraints (NBD_INFO_BLOCK_SIZE). Every
// request this package sends has its offset and length a multiple of Min
// (a request may end at the export's end when the size itself is not a
// multiple), and a read or write carries at most Max bytes: Submit splits
// longer ones.
type BlockSize struct {
	Min       uint32 // alignment of every offset and length; a power of 2, at most 64 KiB
	Preferred uint32 // size and alignment that avoid read-modify-write on the server
	Max       uint32 // most bytes in one read or write request (after our cap, see maxPayloadCap)
	// Advertised is true when the server sent the constraints; false when
	// the defaults below are assumed.
	Advertised bool
}

// Defaults when the server sends no NBD_INFO_BLOCK_SIZE. The spec says a
// server then SHOULD accept a minimum of 1, prefers 4096, and takes at
// least 2^25 bytes per request.
const (
	defaultMin       = 1
	defaultPreferred = 4096
	// maxPayloadCap is the most a read or write carries even when the
	// server allows more (nbdkit says 0xffffffff): the spec promises that
	// no server treats 2^25 bytes as a denial of service, while qemu-nbd
	// hangs up on larger writes.
	maxPayloadCap = 1 << 25
	// maxEffectCap is the longest trim, write zeroes or block status
	// request: the length field has 32 bits; 1 GiB keeps well inside it
	// and needs 1024 requests for a TiB. The spec lets a client exceed the
	// maximum payload for these commands, which carry no payload.
	maxEffectCap = 1 << 30
)

// check rejects constraints we cannot honour, per the spec's rules.
func (b BlockSize) check() error {
	switch {
	case b.Min == 0 || b.Min&(b.Min-1) != 0 || b.Min > 1<<16:
		return protoErrorf("minimum block size %d (want a power of 2 up to 65536)", b.Min)
	case b.Preferred < b.Min || b.Preferred&(b.Preferred-1) != 0:
		return protoErrorf("preferred block size %d (want a power of 2, at least the minimum %d)", b.Preferred, b.Min)
	case b.Max < b.Preferred:
		return protoErrorf("maximum payload %d smaller than the preferred block size %d", b.Max, b.Preferred)
	}
	return nil
}

// effective applies defaults and our caps: Max is rounded down to a
// multiple of Min and capped at maxPayloadCap.
func (b BlockSize) effective() BlockSize {
	if !b.Advertised {
		b = BlockSize{Min: defaultMin, Preferred: defaultPreferred, Max: maxPayloadCap}
	}
	if b.Max > maxPayloadCap {
		b.Max = maxPayloadCap
	}
	b.Max -= b.Max % b.Min
	return b
}

// TxFlags are the export's transmission flags (NBD_FLAG_*).
type TxFlags uint16

// Has reports whether every bit of f2 is set.
func (f TxFlags) Has(f2 TxFlags) bool { return f&f2 == f2 }

// Info describes the export a Client is connected to.
type Info struct {
	Export    string
	Size      int64
	Flags     TxFlags
	BlockSize BlockSize // effective constraints (defaults filled in, Max capped)
	// Structured is true when the server agreed to structured replies:
	// reads can then come back in chunks, holes as zeroes, errors with text.
	Structured bool
	// BlockStatus is true when base:allocation was negotiated, so Extents
	// tells holes and zeroes; without it Extents reports all data.
	BlockStatus bool
	// DirtyBitmap is the name of the dirty bitmap selected (the
	// qemu:dirty-bitmap:NAME context Options.DirtyBitmap asked for), so
	// DirtyExtents answers; "" when none was asked for.
	DirtyBitmap string
	// Connections is how many connections the Client uses: the number
	// asked for when the server allows several (CAN_MULTI_CONN), else 1.
	Connections int
	// Note says why fewer connections or features were used than asked.
	Note string
}

// ReadOnly, CanFlush... read the transmission flags.
func (i Info) ReadOnly() bool     { return i.Flags.Has(FlagReadOnly) }
func (i Info) CanFlush() bool     { return i.Flags.Has(FlagSendFlush) }
func (i Info) CanFUA() bool       { return i.Flags.Has(FlagSendFUA) }
func (i Info) CanTrim() bool      { return i.Flags.Has(FlagSendTrim) }
func (i Info) CanZero() bool      { return i.Flags.Has(FlagSendWriteZeroes) }
func (i Info) CanFastZero() bool  { return i.Flags.Has(FlagSendFastZero) }
func (i Info) CanMultiConn() bool { return i.Flags.Has(FlagCanMultiConn) }

// Options tune Dial. The zero value is usable.
type Options struct {
	// Connections to open (default 1). More than one are opened only when
	// the server advertises CAN_MULTI_CONN; otherwise Info.Note says why
	// one was used.
	Connections int
	// DialTimeout bounds connecting the socket (default 30s).
	DialTimeout time.Duration
	// HandshakeTimeout bounds the option negotiation (default 30s).
	HandshakeTimeout time.Duration
	// Timeout is the longest the server may go without sending a reply
	// message while requests are in flight, or without taking our
	// request bytes (default 5 minutes; a flush of a large cache on slow
	// storage takes long). Negative means no limit.
	Timeout time.Duration
	// NoStructuredReplies asks for simple replies only (tests, and
	// servers whose structured replies misbehave). It also turns off
	// block status, which needs structured replies.
	NoStructuredReplies bool
	// NoBlockStatus skips base:allocation negotiation.
	NoBlockStatus bool
	// DirtyBitmap, when not "", selects QEMU's qemu:dirty-bitmap:NAME
	// metadata context beside base:allocation, for DirtyExtents. A
	// server that does not offer it fails Dial with a *BitmapError
	// (qemu-nbd serves a bitmap with -B NAME; qemu-storage-daemon with
	// the export's bitmaps list).
	DirtyBitmap string

	// forceExportName skips NBD_OPT_GO, to test the fallback.
	forceExportName bool
}

func (o Options) withDefaults() Options {
	if o.Connections <= 0 {
		o.Connections = 1
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 30 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	return o
}
