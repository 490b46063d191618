package copier

// The resume state's types (state_linux.go reads and writes the file,
// identity_linux.go reads and compares identities, resume_linux.go plans
// a resumed copy).

// stateFormat names the file's format; another is refused. Format 1 had
// no size policy and no marks: a rerun could not tell a changed DST.
const stateFormat = "ringcp-resume-2"

// maxStateSize bounds what is read of a state file.
const maxStateSize = 1 << 20

// resumeState is the state file.
type resumeState struct {
	Format string   `json:"format"`
	Src    identity `json:"src"`
	Dst    identity `json:"dst"`
	// Partial is the visible name a new DST is copied under until it is
	// complete (partialName), with its folder resolved; "" for a DST
	// that existed.
	Partial   string `json:"partial,omitempty"`
	SrcOffset int64  `json:"src_offset"`
	DstOffset int64  `json:"dst_offset"`
	Length    int64  `json:"length"`
	// OwnsSize: the copy owns DST's size (a new DST, or a whole-file copy
	// that cuts DST): it is cut where a rerun resumes, and given the
	// range's end as its size. A rerun must have the same policy.
	OwnsSize bool `json:"owns_size"`
	// Image says what image the copy makes of DST (Options.imageKey):
	// "" for a raw DST. A rerun must make the same one: a partial qcow2
	// image is no raw prefix, nor an image of another cluster size.
	Image string `json:"image,omitempty"`
	// BlockSize is what the copy used; for people reading the file: a
	// rerun may use another, the prefix is counted in bytes.
	BlockSize int `json:"block_size"`
	// Done: the first Done bytes of the range are on DST and flushed.
	Done int64 `json:"done"`
	// DstMarks are DST's marks (identity_linux.go) read after the barrier
	// that made Done durable, and again once a stopped run had ended its
	// writes: a rerun that finds them unchanged knows that nothing wrote
	// DST since. nil where nothing records writes (a disk, an export).
	DstMarks *marks `json:"dst_marks,omitempty"`
	Updated  string `json:"updated"` // RFC 3339, for people
	// Sum is the SHA-256 of the record with Sum "", in hex.
	Sum string `json:"sum"`
}

// Identity kinds of local ends; any other kind (an NBD export's) is
// known by its name and size alone (identity.nameDiffers).
const (
	kindFile  = "file"
	kindBlock = "block device"
)

// identity is what tells that a file or device is still the one the state
// was written for.
type identity struct {
	Path string `json:"path"` // as given, for people: a rerun may spell it another way
	Kind string `json:"kind"`
	Size int64  `json:"size,omitempty"` // a block device's, an export's
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
	// Gen and Btime: a file's inode generation and birth time (ns), where
	// its filesystem has them.
	Gen   *uint32 `json:"generation,omitempty"`
	Btime int64   `json:"btime_ns,omitempty"`
	Rdev  uint64  `json:"rdev,omitempty"`
	// Disk is a whole disk's WWID or serial, where sysfs has one: a disk
	// that came back under another number (after a reboot) is the same.
	Disk string `json:"disk,omitempty"`
	// Start is where a partition starts on its disk; DiskSeq the disk's
	// sequence number, for people (a reboot or a new attachment changes
	// it while the storage stays what it was).
	Start   int64        `json:"partition_start,omitempty"`
	DiskSeq string       `json:"diskseq,omitempty"`
	Loop    *loopBacking `json:"loop,omitempty"`
	// Marks are SRC's, compared as they are; nil for DST, whose marks
	// the state keeps beside its prefix (resumeState.DstMarks).
	Marks *marks `json:"marks,omitempty"`
	// ETag is an HTTP or S3 object's entity tag (or, without one, its
	// Last-Modified date): another one is another object.
	ETag string `json:"etag,omitempty"`
}

// loopBacking is what backs a loop device.
type loopBacking struct {
	File      string `json:"file"` // its path then, for people
	Dev       uint64 `json:"dev,omitempty"`
	Ino       uint64 `json:"ino,omitempty"`
	Rdev      uint64 `json:"rdev,omitempty"` // a block device behind the loop
	Offset    int64  `json:"offset"`
	SizeLimit int64  `json:"sizelimit"`
}

// marks are what every write to a file changes.
type marks struct {
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime_ns"`
	Ctime int64 `json:"ctime_ns"`
}

// resumePlan is what Prepare decided about a resumable copy.
type resumePlan struct {
	statePath string
	state     *resumeState // the state found; nil: this run starts the copy
	partial   string       // the partial name of a new DST
	// newDst: DST is created under the partial name, or is that partial
	// file, resumed.
	newDst bool
	// owns: this copy owns DST's size (resumeState.OwnsSize).
	owns bool
	from int64 // where in the range this run starts
	// src and dst are the ends' identities as Prepare found them; a new
	// DST's is known once it is created.
	src, dst identity
}
