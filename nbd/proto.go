package nbd

// Wire constants of the NBD protocol (NetworkBlockDevice/nbd doc/proto.md).
// Every number on the wire is big-endian.

// Magic numbers.
const (
	magicInit        = 0x4e42444d41474943 // "NBDMAGIC", first 8 bytes from the server
	magicOpt         = 0x49484156454F5054 // "IHAVEOPT": newstyle, and every option
	magicOldstyle    = 0x00420281861253   // oldstyle negotiation (unsupported)
	magicOptReply    = 0x3e889045565a9    // option reply
	magicRequest     = 0x25609513         // transmission request
	magicSimple      = 0x67446698         // simple reply
	magicStructured  = 0x668e33ef         // structured reply chunk
	magicExtRequest  = 0x21e41c71         // extended headers (not negotiated)
	magicExtReply    = 0x6e8a278c         // extended headers (not negotiated)
	requestHeaderLen = 28
	simpleHeaderLen  = 16
	chunkHeaderLen   = 20
	optReplyHeadLen  = 20
)

// Handshake flags (server) and client flags.
const (
	flagFixedNewstyle  = 1 << 0
	flagNoZeroes       = 1 << 1
	flagCFixedNewstyle = 1 << 0
	flagCNoZeroes      = 1 << 1
)

// Transmission flags, sent with the export size (Info.Flags).
const (
	FlagHasFlags        TxFlags = 1 << 0
	FlagReadOnly        TxFlags = 1 << 1
	FlagSendFlush       TxFlags = 1 << 2
	FlagSendFUA         TxFlags = 1 << 3
	FlagRotational      TxFlags = 1 << 4
	FlagSendTrim        TxFlags = 1 << 5
	FlagSendWriteZeroes TxFlags = 1 << 6
	FlagSendDF          TxFlags = 1 << 7
	FlagCanMultiConn    TxFlags = 1 << 8
	FlagSendResize      TxFlags = 1 << 9
	FlagSendCache       TxFlags = 1 << 10
	FlagSendFastZero    TxFlags = 1 << 11
)

// Options.
const (
	optExportName      = 1
	optAbort           = 2
	optStartTLS        = 5
	optGo              = 7
	optListMetaContext = 9
	optStructured      = 8
	optSetMetaContext  = 10
	optExtHeaders      = 11
)

// Option reply types; errors have bit 31 set.
const (
	repAck            = 1
	repInfo           = 3
	repMetaContext    = 4
	repFlagError      = 1 << 31
	repErrUnsup       = repFlagError | 1
	repErrPolicy      = repFlagError | 2
	repErrInvalid     = repFlagError | 3
	repErrPlatform    = repFlagError | 4
	repErrTLSReqd     = repFlagError | 5
	repErrUnknown     = repFlagError | 6
	repErrShutdown    = repFlagError | 7
	repErrBlockSize   = repFlagError | 8
	repErrTooBig      = repFlagError | 9
	repErrExtHeadReqd = repFlagError | 10
)

// NBD_INFO types in NBD_REP_INFO replies.
const (
	infoExport    = 0
	infoBlockSize = 3
)

// Commands.
const (
	cmdRead        = 0
	cmdWrite       = 1
	cmdDisc        = 2
	cmdFlush       = 3
	cmdTrim        = 4
	cmdWriteZeroes = 6
	cmdBlockStatus = 7
)

// Command flags.
const (
	cmdFlagFUA      = 1 << 0
	cmdFlagNoHole   = 1 << 1
	cmdFlagDF       = 1 << 2
	cmdFlagReqOne   = 1 << 3
	cmdFlagFastZero = 1 << 4
)

// Structured reply flags and chunk types; error chunks have bit 15 set.
const (
	replyFlagDone         = 1 << 0
	chunkNone             = 0
	chunkOffsetData       = 1
	chunkOffsetHole       = 2
	chunkBlockStatus      = 5
	chunkBlockStatusExt   = 6
	chunkFlagError        = 1 << 15
	chunkError            = chunkFlagError | 1
	chunkErrorOffset      = chunkFlagError | 2
	metaContextAllocation = "base:allocation"
	// metaContextBitmap prefixes a dirty bitmap's name (qemu's
	// docs/interop/nbd.rst); alone, it lists every bitmap.
	metaContextBitmap = "qemu:dirty-bitmap:"
)

// The metadata contexts a connection may select, as indexes of the
// per-context state the decoder and requests keep.
const (
	ctxAllocation = iota // base:allocation
	ctxBitmap            // qemu:dirty-bitmap:NAME (Options.DirtyBitmap)
	numContexts
)

// base:allocation status bits.
const (
	stateHole = 1 << 0
	stateZero = 1 << 1
)

// stateDirty is the one bit of a qemu:dirty-bitmap context: the extent
// changed since the bitmap was cleared.
const stateDirty = 1 << 0

// DefaultPort is the IANA port of NBD, used when a URI names none.
const DefaultPort = "10809"

// Limits that protect us from a server sending absurd lengths.
const (
	// maxOptReply bounds an option reply's payload: strings are at most
	// 4096 bytes by the spec, and INFO/META_CONTEXT replies are small.
	maxOptReply = 64 << 10
	// maxErrorPayload bounds an error chunk: a 4096-byte message plus
	// the fixed fields.
	maxErrorPayload = 4096 + 14
	// maxStatusPayload bounds a BLOCK_STATUS chunk: the spec tells
	// servers to send at most 2^20 extents (4 + 8*2^20 bytes).
	maxStatusPayload = 4 + 8<<20
)
