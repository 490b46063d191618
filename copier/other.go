//go:build !linux

package copier

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"github.com/ringcp/ringcp/align"
)

// Elsewhere than Linux, copier compiles with the same API, so that
// programs built for several systems can import it, and every copy is
// refused before anything is looked at: Prepare (and so Copy) returns a
// *RefusedError of KindNotSupported that unwraps to
// errors.ErrUnsupported. The checks and the engine are Linux code
// (io_uring, O_DIRECT, sysfs, fallocate, OFD locks).

var errUnsupported = errors.ErrUnsupported

func linuxOnly(path string) error {
	return &RefusedError{Kind: KindNotSupported, Path: path, Field: "Src",
		Reason: fmt.Sprintf("ringcp copies on Linux only (this is %s)", runtime.GOOS), Err: errUnsupported}
}

// endpoint is what the portable parts of Prepare read of one end.
type endpoint struct {
	path    string
	exists  bool
	isBlock bool
	geo     align.Geometry
	direct  bool
	why     string
}

func inspectSource(path string) (endpoint, error) { return endpoint{}, linuxOnly(path) }
func inspectDest(path string) (endpoint, error)   { return endpoint{}, linuxOnly(path) }
func sameObject(a, b *endpoint) bool              { return false }
func sameObjectWhy(a, b *endpoint) (bool, string) { return false, "" }
func servedEnds(a, b *endpoint) (bool, string)    { return false, "" }
func (ep *endpoint) tryDirect() error             { return errUnsupported }

// Prepare's steps, never reached: inspectSource has refused.
func (p *Plan) checkPseudoFS() error    { return nil }
func (p *Plan) checkInUse() error       { return nil }
func (p *Plan) checkLocks() error       { return nil }
func (p *Plan) checkNewInDev() error    { return nil }
func (p *Plan) checkWritable() error    { return nil }
func (p *Plan) checkFileLimit() error   { return nil }
func (p *Plan) checkImageFormat() error { return nil }
func (p *Plan) chooseOffload() error    { return nil }
func (p *Plan) checkRoom() error        { return nil }
func (p *Plan) fitShare() error         { return nil }
func (p *Plan) chooseIOPrio() error     { return nil }
func (p *Plan) uringObstacle() string   { return "" }

// run refuses: no Plan is ever prepared here.
func (p *Plan) run(ctx context.Context) (Report, error) {
	return Report{}, linuxOnly(p.opts.Src)
}

func errnoName(e syscall.Errno) string { return "" }

func (p *Plan) checkEmptyDevice() error { return nil }

// NBD ends are Linux code (export_linux.go): every end is local here.
func (ep *endpoint) local() bool      { return true }
func (ep *endpoint) exportAlign() int { return 0 }
func (p *Plan) exportSparse()         {}
func (p *Plan) checkExports() error   { return nil }

// Close has nothing to release here.
func (p *Plan) Close() error { return nil }

func (p *Plan) inspectEnd(path, field string, local func(string) (endpoint, error)) (endpoint, error) {
	return local(path)
}

// A batch's checks across jobs, never reached: every Prepare refused.
func (b *Batch) crossCheck() []*JobError { return nil }
func (b *Batch) roomCheck() []*JobError  { return nil }

// Run refuses: no Batch is ever prepared here.
func (b *Batch) Run(ctx context.Context) (BatchReport, error) {
	return BatchReport{}, linuxOnly("")
}

// The resume state is Linux code (stat fields); never reached here.
type resumePlan struct{}

func (p *Plan) inspectTarget() (endpoint, error) { return inspectDest(p.opts.Dst) }
func (p *Plan) checkResume() error               { return nil }

// Compare refuses: it reads files on Linux only.
func Compare(ctx context.Context, o ReadOptions) (ReadReport, error) {
	return ReadReport{}, linuxOnly(o.Src)
}

// Checksum refuses: it reads files on Linux only.
func Checksum(ctx context.Context, o ReadOptions) (ReadReport, error) {
	return ReadReport{}, linuxOnly(o.Src)
}
