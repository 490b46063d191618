package copier

import (
	"context"

	"github.com/ringcp/ringcp/engine"
)

// readPass runs an engine read pass (job.Check set) on the plan's
// backend, on this goroutine, and releases the backend.
func (p *Plan) readPass(ctx context.Context, job engine.Job) (engine.Stats, error) {
	c, err := p.openEngine(job, &Report{})
	if err != nil {
		return engine.Stats{}, err
	}
	st, err := c.Run(ctx)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// passJob is a read pass over n bytes with the plan's block size and the
// given buffers, on the cell grid: chunks then never cross a cell. Under
// a cgroup read limit its requests are cut and issued blocking
// (readfit.go).
func (p *Plan) passJob(bufs [][]byte, n int64, check engine.CheckFunc) engine.Job {
	return engine.Job{Length: n, BlockSize: p.BlockSize, Buffers: bufs, SrcAlign: 1, DstAlign: 1,
		Grid: CellSize, Check: check, Progress: &engine.Progress{},
		MaxRequest: p.passFit.request, Blocking: p.passFit.limited}
}
