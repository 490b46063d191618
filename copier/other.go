//go:build !linux

package copier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Elsewhere than Linux, copier compiles with the same API, so that
// programs built for several systems can import it, and every copy is
// refused before anything is looked at: Prepare (and so Copy), PrepareAll,
// Compare and Checksum return a *RefusedError of KindNotSupported that
// unwraps to errors.ErrUnsupported. The ends, the checks and the engine
// are Linux code (io_uring, O_DIRECT, sysfs, fallocate, OFD locks); no
// Plan or Batch is ever made here, so their Run is never reached.

func linuxOnly(path, field string) error {
	return &RefusedError{Kind: KindNotSupported, Path: path, Field: field,
		Reason: fmt.Sprintf("ringcp copies on Linux only (this is %s)", runtime.GOOS), Err: errors.ErrUnsupported}
}

// Prepare refuses: it checks ends on Linux only.
func Prepare(opts Options) (*Plan, error) { return nil, linuxOnly(opts.Src, "Src") }

// PrepareAll refuses: it checks ends on Linux only.
func PrepareAll(opts []Options, bo BatchOptions) (*Batch, error) { return nil, linuxOnly("", "") }

// Run refuses: no Plan is ever prepared here.
func (p *Plan) Run(ctx context.Context) (Report, error) {
	return Report{}, linuxOnly(p.opts.Src, "Src")
}

// Run refuses: no Batch is ever prepared here.
func (b *Batch) Run(ctx context.Context) (BatchReport, error) {
	return BatchReport{}, linuxOnly("", "")
}

// Compare refuses: it reads files on Linux only.
func Compare(ctx context.Context, o ReadOptions) (ReadReport, error) {
	return ReadReport{}, linuxOnly(o.Src, "Src")
}

// Checksum refuses: it reads files on Linux only.
func Checksum(ctx context.Context, o ReadOptions) (ReadReport, error) {
	return ReadReport{}, linuxOnly(o.Src, "Src")
}

// PrepareEach refuses: it reads files on Linux only.
func PrepareEach(o EachOptions) (*EachPlan, error) { return nil, linuxOnly(o.Src, "Src") }

// Run refuses: no EachPlan is ever prepared here.
func (e *EachPlan) Run(ctx context.Context) (ReadReport, error) {
	return ReadReport{}, linuxOnly("", "")
}

// Close does nothing here.
func (e *EachPlan) Close() {}

// Length is 0 here.
func (e *EachPlan) Length() int64 { return 0 }

// SetMaxRate does nothing here.
func (e *EachPlan) SetMaxRate(bytesPerSecond int64) {}

// batchWatchers are the watchers of a batch's jobs: Linux only.
type batchWatchers struct{}

// WatchFile refuses: what a write changes is read on Linux only.
func WatchFile(f *os.File, path string, size int64) (unchanged func() error, err error) {
	return nil, linuxOnly(path, "")
}
