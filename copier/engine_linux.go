package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/engine"
	_ "github.com/ringcp/ringcp/fallback" // registers the pool backend
)

// chooseEngine settles the backend now, from engine's registry, so that a
// backend asked for that cannot run here is refused before DST is
// touched. auto takes the most preferred backend that may run this copy
// and is available, and says why it passed over the others.
func (p *Plan) chooseEngine() error {
	if p.opts.Engine != EngineAuto {
		b, _ := engine.LookupBackend(string(p.opts.Engine)) // normalize checked the name
		asked := "Options.Engine " + b.Name
		if why := p.engineObstacle(b); why != "" {
			return refuse(KindNotSupported, "", asked+": "+why).on("Engine")
		}
		if err := b.Available(); err != nil {
			return refuseErr(KindNotSupported, "", asked, err).on("Engine")
		}
		p.setEngine(b, "asked for")
		return nil
	}
	var passed []string
	for _, b := range engine.Backends() {
		if !p.reaches(b) {
			continue // not a fallback: only backends that reach every end can run the copy
		}
		why := p.engineObstacle(b)
		if why == "" {
			err := b.Available()
			if err != nil && !engine.Unavailable(err) {
				return err
			}
			if err != nil {
				why = err.Error()
			}
		}
		if why == "" {
			p.FallbackReason = first(passed)
			p.setEngine(b, p.FallbackReason)
			return nil
		}
		passed = append(passed, why)
	}
	return refuse(KindNotSupported, "", "no engine can run this copy: "+first(passed)).on("Engine")
}

// engineObstacle says why backend b must not run this copy, or "".
func (p *Plan) engineObstacle(b engine.BackendInfo) string {
	if !p.reaches(b) {
		ep := p.src
		if !ep.ownIO {
			ep = p.dst
		}
		return fmt.Sprintf("it moves data through file descriptors only, and %s %s (%s) moves its own (the pool reaches both)", ep.role.tag(), ep.path, ep.what)
	}
	if b.Caps&engine.NeedsHonestShortIO != 0 {
		return p.uringObstacle()
	}
	return ""
}

// reaches says b can move data for both ends: every backend reaches files
// and devices, those with engine.AnyEnd the ends that move their own
// bytes (an NBD export) too.
func (p *Plan) reaches(b engine.BackendInfo) bool {
	return b.Caps&engine.AnyEnd != 0 || (!p.src.ownIO && !p.dst.ownIO)
}

// uringObstacle says why io_uring must not run this copy, or "": the
// first end whose kind says so (a file on a filesystem where io_uring's
// counts were not checked).
func (p *Plan) uringObstacle() string {
	if why := p.src.uringObstacle("SRC"); why != "" {
		return why
	}
	return p.dst.uringObstacle("DST")
}

func (p *Plan) setEngine(b engine.BackendInfo, why string) {
	p.Backend, p.backend = EngineChoice(b.Name), b
	if why == "" {
		p.note("engine %s", b.Name)
		return
	}
	p.note("engine %s: %s", b.Name, why)
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}

// openEngine sets up the backend the plan chose. In auto mode it can still
// become unavailable between Prepare and Run (io_uring switched off by
// sysctl): then the first backend that works everywhere takes over, and
// the report says why. Any other failure (EMFILE, ENOMEM past the memlock
// fallback) is not a reason to switch backends: it fails.
func (p *Plan) openEngine(job engine.Job, rep *Report) (*engine.Copy, error) {
	c, err := engine.Open(job, p.backend.New)
	if err == nil || p.opts.Engine != EngineAuto || !engine.Unavailable(err) {
		return c, err
	}
	for _, b := range engine.Backends() {
		if b.Caps&engine.WorksEverywhere != 0 {
			rep.FallbackReason = err.Error()
			return engine.Open(job, b.New)
		}
	}
	return nil, fmt.Errorf("no backend to fall back to: %w", err)
}
