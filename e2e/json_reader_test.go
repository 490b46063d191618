package e2e

// What these tests read of ringcp's JSON output, as a program that reads it
// would: the fields they check, under the names the README documents. They
// are decoded from the text, never shared with the command's own types, so
// that a renamed field fails here.

// jsonReport is the --json object of a copy.
type jsonReport struct {
	Outcome      string        `json:"outcome"`   // complete, refused, failed, interrupted
	ExitCode     int           `json:"exit_code"` // the command's exit code
	Engine       string        `json:"engine"`
	EngineDetail string        `json:"engine_detail"`
	BlockSize    int           `json:"block_size"`
	QueueDepth   int           `json:"queue_depth"`
	Synced       bool          `json:"synced"`
	DstState     string        `json:"dst_state"`
	Error        *jsonError    `json:"error"`
	MaxRate      int64         `json:"max_rate"`
	IOLimits     []jsonIOLimit `json:"io_limits"`
	Yield        *jsonYield    `json:"yield"`
}

// jsonError is why a command did not complete.
type jsonError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Errno   string `json:"errno"`
	Path    string `json:"path"` // the file the error is of, when one is
}

// message is the error's message, "" without one.
func (r jsonReport) message() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Message
}

// jsonIOLimit is a cgroup limit the copy was fitted to.
type jsonIOLimit struct {
	Disk     string `json:"disk"`
	ReadBPS  uint64 `json:"read_bps"`
	WriteBPS uint64 `json:"write_bps"`
}

// jsonYield is what --yield did.
type jsonYield struct {
	Cuts        int     `json:"cuts"`
	Raises      int     `json:"raises"`
	Futile      int     `json:"futile"`
	CutMs       int64   `json:"cut_milliseconds"`
	LowestDepth int     `json:"lowest_depth"`
	LowestRate  int64   `json:"lowest_rate"`
	ProbeBaseUs int64   `json:"probe_base_microseconds"`
	ProbeMaxUs  int64   `json:"probe_max_microseconds"`
	OthersMax   float64 `json:"others_max_iops"`
	PSISomeMax  float64 `json:"psi_some_max"`
	PSIFullMax  float64 `json:"psi_full_max"`
}

// jsonVerify is the "verify" object of --verify.
type jsonVerify struct {
	Result         string `json:"result"`
	Bytes          int64  `json:"bytes"`
	BlockSize      int    `json:"block_size"`
	BadBlocks      int64  `json:"bad_blocks"`
	FirstBadOffset int64  `json:"first_bad_offset"`
	Read           string `json:"read"`
}

// jsonJobs is the --json object of --jobs.
type jsonJobs struct {
	Jobs []struct {
		Job     int    `json:"job"`
		Line    int    `json:"line"`
		Outcome string `json:"outcome"`
		jsonReport
	} `json:"jobs"`
	Total struct {
		Jobs       int   `json:"jobs"`
		Complete   int   `json:"complete"`
		Failed     int   `json:"failed"`
		Bytes      int64 `json:"bytes"`
		QueueDepth int   `json:"queue_depth"`
		Synced     bool  `json:"synced"`
	} `json:"total"`
}

// jsonCompare is `ringcp verify --json`.
type jsonCompare struct {
	Equal          bool  `json:"equal"`
	FirstBadOffset int64 `json:"first_bad_offset"`
	BadBlocks      int64 `json:"bad_blocks"`
}

// versionInfo is `ringcp --version --json`.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Modified bool   `json:"modified"`
}
