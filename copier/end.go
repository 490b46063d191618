package copier

import (
	"os"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/guard"
)

// An end is SRC or DST of a copy. Each kind of end (a local file or block
// device, an NBD export; kinds.go registers them) has its own type, made
// by the kind's inspect from an operand, and everything about an end that
// depends on its kind is that type's: how it is looked at, checked,
// opened, locked and closed; its identity and what it shares with other
// ends; the space it takes; what a failure leaves in it; how it is read
// back. The Plan and the rest of copier ask, and never branch on what
// kind an end is.
//
// An endpoint is what every kind fills in, and what the Plan reads
// directly; end is what it asks.
type endpoint struct {
	end
	path string // the operand as given: a path, a URI
	role role
	// exists: the end is there; false only for a new DST, which the copy
	// creates.
	exists bool
	// geo is what the end allows and prefers: its size, its O_DIRECT
	// alignment (DirectAlign), its optimal request (OptimalIO), whether
	// zeroing it is cheap (WriteZeroesMax).
	geo align.Geometry
	// direct: the engine opens it with O_DIRECT (chooseDirect); why says
	// why or why not, for -v.
	direct bool
	why    string
	endFacts
}

// endFacts are what a kind says of an end when it inspects it.
type endFacts struct {
	// what names the end in messages: "file", "block device", "NBD
	// export".
	what string
	// fixedSize: the end's size is its own, never cut nor grown (a block
	// device, an export): the range must fit in it.
	fixedSize bool
	// ownIO: the engine reaches the end through an engine.IOEnd, not a
	// descriptor; only a backend with engine.AnyEnd can run the copy.
	ownIO bool
	// canDirect: O_DIRECT is a question for this end (chooseDirect asks
	// its directObstacle); false leaves it buffered without a note.
	canDirect bool
	// offloads: a regular file on a filesystem, which the kernel may
	// copy within (reflink, copy_file_range) when both ends are.
	offloads bool
	// minAlign, when positive, is what every request's offset and length
	// must be a multiple of whatever O_DIRECT says (an export's minimum
	// block size).
	minAlign int
	// maxRequest, when positive, is the most one request may move on
	// this end, which the block size then keeps to (decideSizes); 0 for
	// no limit of its own (an NBD client splits what is over its
	// server's maximum).
	maxRequest int
	// conns, when positive, is how many connections the end is read
	// over (an HTTP or S3 object's ranges): the queue depth follows it,
	// one request in flight per connection, unless one was given
	// (decideSizes).
	conns int
	// mapsHoles: as SRC, the end says where its data is (SEEK_DATA, NBD
	// block status), and the copy does not read its holes.
	mapsHoles bool
	// allZeros: as SRC, every byte reads as zero and the end says it has
	// no data (/dev/zero): even a copy that writes every byte as data
	// (Sparse never) zeroes a DST of a fixed size the engine's way.
	allZeros bool
	// sizeless: as DST, it has no size: nothing past the copy to keep or
	// to cut (standard output, /dev/null).
	sizeless bool
	// stream: as DST, written once, in order, from its start (standard
	// output): no offset.
	stream bool
	// openEnded: as SRC, its size is not known before it ends (a pipe, a
	// compressed stream that does not say): the copy runs until it ends
	// (end_src_size_linux.go).
	openEnded bool
	// readBackMaps: the end's map is trusted to say where it reads as
	// zeros when a verification checks it. A file's is; an export's block
	// status is the server's word: read back as DST, every byte is read,
	// and as SRC, the ranges its map called zeros (which the copy did not
	// read) are read after the copy and must be zeros (srczeros_linux.go).
	readBackMaps bool
	// holeAlign: as DST, zero runs are rounded inward to this (a block
	// device's logical block, which fallocate needs; an export's
	// preferred block); 0 for none.
	holeAlign int
	// zeroUnit is what the zero detection block is rounded up to on this
	// DST, and zeroUnitWhat names it for the note; 0 is the alignment.
	zeroUnit     int
	zeroUnitWhat string
	// notZeroed: a new DST that does not read as zeros (an image over a
	// backing file): SRC's holes and zeros are written as zeros.
	notZeroed bool
	// readsFile: as DST, its format reads the file beneath while it
	// writes (an existing qcow2 image's tables): it is opened read-write.
	readsFile bool
	// disk is the whole disk whose I/O the cgroups count for this end;
	// onDisk false when there is none (tmpfs, NFS, an export).
	disk   uint64
	onDisk bool
}

// role says which end of the copy an endpoint is.
type role uint8

const (
	roleSrc role = iota
	roleDst
)

// field is the Options field that names the end ("Src", "Dst"), for
// refusals.
func (r role) field() string {
	if r == roleSrc {
		return "Src"
	}
	return "Dst"
}

// tag names the end in notes ("SRC", "DST").
func (r role) tag() string {
	if r == roleSrc {
		return "SRC"
	}
	return "DST"
}

// alignment is what the engine must respect on this side: an export's
// minimum block size, a file's O_DIRECT alignment when direct, else 1.
func (ep *endpoint) alignment() int {
	switch {
	case ep.minAlign > 0:
		return ep.minAlign
	case !ep.direct:
		return 1
	}
	return ep.geo.DirectAlign()
}

// end is what copier asks the kind of an end. Each method answers for
// this end; p is the copy's Plan, whose options, range and other end it
// may read.
type end interface {
	// checkAlone refuses what is wrong with the end whatever the range
	// (a file on a pseudo filesystem, an empty block device). Prepare
	// asks it before the range is checked, as do Compare and Checksum.
	checkAlone(p *Plan) error
	// check refuses what the copy's range and options ask of the end and
	// it cannot give, and notes (-v) what Prepare learned of it: an
	// export's block sizes, a read-only export, a file in use, locked, not
	// writable, too large for its filesystem, an image container. Prepare
	// asks it once the range, the resume state and the ends' identities
	// are settled, SRC first.
	check(p *Plan) error
	// same says the end and o are one object (one file or device, one
	// export, two new DSTs that would be one file, a file an export's
	// server holds open), and what, for people: "the same file". A kind
	// answers for the ends of other kinds it may be (the NBD kind for a
	// local file), so oneObject asks both ends.
	same(o *endpoint) (same bool, what string)
	// overlap says where the end and o, not the same object, reach the
	// same bytes all the same (through partitions and loop devices), or
	// nil. mine and theirs are the byte ranges each is used in.
	overlap(mine byteRange, o *endpoint, theirs byteRange) *overlap
	// directObstacle says what keeps the end from O_DIRECT when starting
	// at off, or "" (asked only where endFacts.canDirect).
	directObstacle(p *Plan, off int64) string
	// uringObstacle says why io_uring must not run a copy on this end,
	// or "" (asked only of ends that are descriptors); tag names it.
	uringObstacle(tag string) string
	// srcData is where SRC's data lies in the range, for the space a copy
	// needs, with a reader of it for counting zero blocks.
	srcData(p *Plan) (srcData, error)
	// space says where a DST takes space for the copy (ok false: it takes
	// none, as a block device or an export).
	space(p *Plan) (s dstSpace, ok bool)
	// identity is what a resume state records of the end, to know it
	// again, as it is now (a file's read through a descriptor checked to
	// be the one Prepare inspected); a new DST has none yet (Kind "").
	identity() (identity, error)
	// open opens the end to be read, checked to be what Prepare saw.
	open(p *Plan, rep *Report) (*held, error)
	// lock takes the locks a SRC holds while it is read, on h, which
	// drops them when closed; it refuses a SRC someone writes (unless
	// Force).
	lock(p *Plan, h *held, rep *Report) error
	// openDst takes DST's locks and opens it to be written, without
	// changing it.
	openDst(p *Plan, rep *Report) (target, error)
	// close releases what Prepare holds open of the end between Prepare
	// and Run (an export's connections).
	close() error
}

// byteRange is a range of an end's bytes a copy reads or changes; end -1
// runs to the end's end (a DST that is cut).
type byteRange struct{ off, end int64 }

// overlap says where two ends share bytes: on what, and as what each
// reaches it ("/dev/sda at 1048576+4194304").
type overlap struct{ on, mine, theirs string }

// srcData is where SRC's data is within the range.
type srcData struct {
	ext guard.Extents
	// read reads SRC, to count the zero blocks in ext; nil when it
	// cannot be read for that.
	read interface {
		ReadAt([]byte, int64) (int, error)
	}
	how   string // what ext counts, for a refusal: "" for SRC's extents
	close func()
}

// dstSpace is where a DST takes space: a filesystem, the path to ask it
// for its free space, and what DST gives back to it (its own blocks, when
// cut or overwritten).
type dstSpace struct {
	fs        uint64
	at        string
	reclaimed int64
}

// held is an end as Run holds it open: what the engine reads or writes
// (a descriptor, or an end that moves its own bytes), and the alignment
// the engine must keep on it now.
type held struct {
	f  *os.File     // a file or device's descriptor, nil for an IOEnd
	io engine.IOEnd // an end that moves its own bytes, nil for a descriptor
	// mapped, when not nil, answers the engine's Data beside f, which the
	// backends read (/dev/zero says it has no data).
	mapped engine.Endpoint
	align  int
	// done, when not nil, is called once the copy read its whole range
	// (a SRC of end_src_linux.go): the rest of a compressed stream and
	// its checks, Options.ExpectChecksum's digest.
	done func() error
	// stream is a SRC read in order, which knows where it ended.
	stream *seqIO
	// cause, when not nil, is the first error the end met, which the
	// engine's errno does not say.
	cause func() error
	// release closes it; nil when there is nothing to close.
	release func()
	// interrupt, when not nil, makes the end's reads in flight, and any
	// after them, fail at once: a stop that must not wait for a SRC that
	// gives nothing (a stalled server, a silent pipe). Run calls it when
	// its context ends.
	interrupt func()
	// unchanged, when not nil, fails when a file the end read changed
	// while it was read, or says what was not checked
	// (srcchanged_linux.go); a SRC's.
	unchanged func(srcCheck) (limit string, err error)
}

// into makes h end id of job: its descriptor in Files, or its IOEnd in
// Ends.
func (h *held) into(job *engine.Job, id engine.FileID) {
	if h.f != nil {
		job.Files[id], job.Ends[id] = h.f, h.mapped
		return
	}
	job.Files[id], job.Ends[id] = nil, h.io
}

// name is what the engine calls h in an *engine.OpError: the name of
// what into gave it.
func (h *held) name() string {
	switch {
	case h.f != nil && h.mapped != nil:
		return h.mapped.Name()
	case h.f != nil:
		return h.f.Name()
	case h.io != nil:
		return h.io.Name()
	}
	return ""
}

// close releases h once; safe on nil.
func (h *held) close() {
	if h != nil && h.release != nil {
		h.release()
		h.release = nil
	}
}

// target is DST as Run holds it: opened and locked, not yet changed. Its
// kind decides what happens to it at each step of the copy's life.
type target interface {
	// held is what the engine writes, and reads back.
	held() *held
	// shape sets what the engine does to DST's size: a final size, a cut
	// back after a stop, preallocation (a file the copy owns).
	shape(p *Plan, job *engine.Job)
	// cut is DST's first change, once everything is acquired: a file the
	// copy replaces is cut to DstOffset.
	cut(p *Plan) error
	// publish makes a new, complete DST visible under its name (durably
	// with sync). Nothing to do for one that existed.
	publish(p *Plan, sync bool) error
	// discard removes a new DST that will not be complete, and says
	// whether nothing of it is left; false for one that existed.
	discard() bool
	// left says what a copy that stopped with rep left in DST (a new DST
	// that did not complete is discarded here).
	left(p *Plan, rep *Report) DstState
	// readBack makes the reads that follow come from the storage, not a
	// cache of what was written, and says how, for the report.
	readBack(p *Plan) (how string, err error)
	// identity is DST's identity once acquired, for a resume state.
	identity(p *Plan) (identity, error)
	// keep(true): a resume state records DST, which a failure must then
	// leave for the next run; keep(false) undoes it (the state is gone
	// again); kept says which.
	keep(on bool)
	kept() bool
	// release closes what openDst opened.
	release()
}
