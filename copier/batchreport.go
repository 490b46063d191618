package copier

// BatchReport is what a batch did.
type BatchReport struct {
	// Jobs has one entry per job, in the order given, whatever happened.
	Jobs []JobReport
	// Seconds and CPUSeconds are the whole batch's wall time and this
	// process's CPU time (io_uring workers included) over it.
	Seconds    float64
	CPUSeconds float64
	// BlockSize and Slots are the shared buffers (Batch's).
	BlockSize int
	Slots     int
	// MaxRate is the cap on all the jobs together when the batch ended
	// (BatchOptions.MaxRate, Batch.SetMaxRate); 0 for none.
	MaxRate int64
	// Neighbour is what the good neighbour of the shared budget chose
	// (neighbour.go), as a single copy's Report says; nil when a job
	// gave the queue depth, or the batch was too short for a sample.
	Neighbour *NeighbourReport
}

// JobReport is one job's Report and error. Err is nil for a job that is
// complete (and synced, unless NoSync); ErrNotStarted (and the context's
// error) for one that never started. A job's CPUSeconds is the process's
// CPU while it ran, which the jobs running beside it share.
type JobReport struct {
	Report
	Err     error
	Started bool // the job began cutting or writing its DST
}
