package ring

import "unsafe"

// Kernel ABI of io_uring, from include/uapi/linux/io_uring.h. x/sys has the
// syscall numbers but none of these, so they are declared here. Versions are
// those in which each value appeared.

// Opcodes.
const (
	OpNop        uint8 = 0  // 5.1
	OpReadv      uint8 = 1  // 5.1
	OpWritev     uint8 = 2  // 5.1
	OpFsync      uint8 = 3  // 5.1
	OpReadFixed  uint8 = 4  // 5.1
	OpWriteFixed uint8 = 5  // 5.1
	OpFallocate  uint8 = 17 // 5.6
	OpRead       uint8 = 22 // 5.6
	OpWrite      uint8 = 23 // 5.6
)

// FsyncDatasync makes an OpFsync an fdatasync.
const FsyncDatasync uint32 = 1

// SQE flags.
const (
	SQEFixedFile uint8 = 1 << 0 // fd is an index into the registered files
	SQEIODrain   uint8 = 1 << 1 // start only after everything before it completed
	SQEIOLink    uint8 = 1 << 2 // the next SQE starts only after this one succeeded
	SQEAsync     uint8 = 1 << 4 // 5.6: issue from an io-wq worker, blocking, without a non-blocking try first
)

// SetupFlags are io_uring_setup flags.
type SetupFlags uint32

// Setup flags. SQPOLL is not offered: a kernel thread polling the SQ
// needs IORING_ENTER_SQ_WAKEUP handling and spends a core, and the engine
// submits a batch per io_uring_enter anyway.
const (
	FlagCQSize        SetupFlags = 1 << 3  // 5.5
	FlagClamp         SetupFlags = 1 << 4  // 5.6
	FlagCoopTaskrun   SetupFlags = 1 << 8  // 5.19
	FlagTaskrunFlag   SetupFlags = 1 << 9  // 5.19, needs COOP_TASKRUN or DEFER_TASKRUN
	FlagSingleIssuer  SetupFlags = 1 << 12 // 6.0
	FlagDeferTaskrun  SetupFlags = 1 << 13 // 6.1, needs SINGLE_ISSUER
	flagKnownOptional            = FlagCQSize | FlagClamp | FlagCoopTaskrun | FlagTaskrunFlag | FlagSingleIssuer | FlagDeferTaskrun
)

// Features are what io_uring_setup reported the kernel can do.
type Features uint32

// Feature bits.
const (
	FeatSingleMmap Features = 1 << 0 // 5.4: SQ and CQ rings share one mapping
	FeatNoDrop     Features = 1 << 1 // 5.5: overflowed CQEs are kept, not dropped
	FeatExtArg     Features = 1 << 8 // 5.11
)

// io_uring_enter flags.
const (
	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3 // 5.11: the argument is a getEventsArg
)

// getEventsArg is struct io_uring_getevents_arg, passed with enterExtArg
// to bound a wait with a timeout.
type getEventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	MinWaitUs uint32 // 6.12; 0 leaves it off
	Ts        uint64 // address of a timespec
}

// SQ ring flags, written by the kernel.
const (
	sqCQOverflow = 1 << 1 // CQEs wait in the kernel's overflow list
	sqTaskrun    = 1 << 2 // task work is pending (COOP_TASKRUN|TASKRUN_FLAG)
)

// io_uring_register opcodes.
const (
	registerBuffers        = 0
	unregisterBuffers      = 1
	registerFiles          = 2
	unregisterFiles        = 3
	registerProbe          = 8  // 5.6
	registerIOWQMaxWorkers = 19 // 5.15
	probeOpSupported       = 1 << 0
)

// mmap offsets of the three shared regions.
const (
	mmapOffSQRing = 0
	mmapOffCQRing = 0x8000000
	mmapOffSQEs   = 0x10000000
)

// Sizes of kernel structures, checked against the Go types below.
const (
	sqeSize         = 64
	cqeSize         = 16
	paramsSize      = 120
	probeHeaderSize = 16
	probeOpSize     = 8
	probeMaxOps     = 256
	maxEntries      = 32768 // IORING_MAX_ENTRIES
)

type sqRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// params is struct io_uring_params.
type params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	Resv         [3]uint32
	SQOff        sqRingOffsets
	CQOff        cqRingOffsets
}

// SQE is struct io_uring_sqe (64 bytes). It lives in memory shared with the
// kernel; fill it with a Prep helper between GetSQE and Submit.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IOPrio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // rw_flags, fsync_flags, ...
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	FileIndex   uint32
	Addr3       uint64
	_           uint64
}

// CQE is struct io_uring_cqe (16 bytes), copied out of the CQ ring.
type CQE struct {
	UserData uint64
	Res      int32 // bytes moved, or -errno
	Flags    uint32
}

// Compile-time layout checks: a wrong size here would corrupt the rings.
var (
	_ [sqeSize - unsafe.Sizeof(SQE{})]struct{}
	_ [unsafe.Sizeof(SQE{}) - sqeSize]struct{}
	_ [cqeSize - unsafe.Sizeof(CQE{})]struct{}
	_ [unsafe.Sizeof(CQE{}) - cqeSize]struct{}
	_ [paramsSize - unsafe.Sizeof(params{})]struct{}
	_ [unsafe.Sizeof(params{}) - paramsSize]struct{}
	_ [24 - unsafe.Sizeof(getEventsArg{})]struct{}
	_ [unsafe.Sizeof(getEventsArg{}) - 24]struct{}
)
