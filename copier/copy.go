package copier

import "context"

// The entry points: Copy here; Prepare (prepare_linux.go) and Plan.Run
// (run_linux.go) for a caller that looks at the plan before it runs;
// PrepareAll and Batch.Run (batchprepare_linux.go, batchrun_linux.go) for
// several copies at once; Compare and Checksum (compare_linux.go,
// readonly_linux.go) to read what is there. Elsewhere than Linux, other.go
// refuses them.

// Copy is Prepare followed by Run.
func Copy(ctx context.Context, opts Options) (Report, error) {
	p, err := Prepare(opts)
	if err != nil {
		return Report{}, err
	}
	return p.Run(ctx)
}
