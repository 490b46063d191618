package copier

// The resume state's types (state_linux.go reads and writes the file,
// resume_linux.go plans a resumed copy).

// stateFormat names the file's format; another is refused.
const stateFormat = "ringcp-resume-1"

// resumeState is the state file.
type resumeState struct {
	Format string   `json:"format"`
	Src    identity `json:"src"`
	Dst    identity `json:"dst"`
	// Partial is the visible name a new DST is copied under until it is
	// complete (partialName), "" for a DST that existed.
	Partial   string `json:"partial,omitempty"`
	SrcOffset int64  `json:"src_offset"`
	DstOffset int64  `json:"dst_offset"`
	Length    int64  `json:"length"`
	// BlockSize is what the copy used; for people reading the file: a
	// rerun may use another, the prefix is counted in bytes.
	BlockSize int `json:"block_size"`
	// Done: the first Done bytes of the range are on DST and flushed.
	Done    int64  `json:"done"`
	Updated string `json:"updated"` // RFC 3339, for people
}

// identity is what tells that a file or device is still the one the state
// was written for.
type identity struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // the end's kind: "file", "block device", "NBD export"
	// Size: a file SRC's size, a block device's. A file DST's size changes
	// as it is written and is not compared.
	Size  int64  `json:"size"`
	Dev   uint64 `json:"dev,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Rdev  uint64 `json:"rdev,omitempty"`
	Mtime int64  `json:"mtime_ns,omitempty"` // a file SRC's, in ns
	Ctime int64  `json:"ctime_ns,omitempty"`
	// ETag is an HTTP or S3 object's entity tag (or, without one, its
	// Last-Modified date): another one is another object.
	ETag string `json:"etag,omitempty"`
}

// resumePlan is what Prepare decided about a resumable copy.
type resumePlan struct {
	statePath string
	state     *resumeState // the state found; nil: this run starts the copy
	partial   string       // the partial name of a new DST
	// newDst: DST is created under the partial name, or is that partial
	// file, resumed.
	newDst bool
	from   int64 // where in the range this run starts
}

// StatePath is where a resumable copy to dst keeps its state by default:
// next to it, as DST.ringcp-state.
func StatePath(dst string) string { return dst + ".ringcp-state" }
