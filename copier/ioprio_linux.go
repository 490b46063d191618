package copier

import (
	"errors"
	"syscall"

	"github.com/ringcp/ringcp/engine"
)

// chooseIOPrio checks Options.IOPrio with the kernel before anything is
// written: the real-time class needs CAP_SYS_ADMIN or CAP_SYS_NICE, and
// io_uring would only say so (EPERM) on the first request.
func (p *Plan) chooseIOPrio() error {
	prio, _ := engine.ParseIOPrio(p.opts.IOPrio) // normalize checked it
	if prio == 0 {
		return nil
	}
	if err := tryIOPrio(prio); err != nil {
		kind, why := KindNotSupported, "the kernel refused it"
		if errors.Is(err, syscall.EPERM) {
			kind, why = KindPermission, "the real-time class needs CAP_SYS_ADMIN or CAP_SYS_NICE"
		}
		return refuseErr(kind, "IOPrio", "Options.IOPrio "+p.opts.IOPrio+": "+why, err)
	}
	p.IOPrio = prio.String()
	p.note("I/O priority %s on every read and write (%s)", p.IOPrio, ioprioEffect(prio))
	return nil
}

// ioprioEffect says what a class does, for -v.
func ioprioEffect(p engine.IOPrio) string {
	switch p.Class() {
	case engine.IOPrioClassIdle:
		return "served when no other I/O waits, where the disk's scheduler is mq-deadline or bfq"
	case engine.IOPrioClassRT:
		return "served before all other I/O, where the disk's scheduler is mq-deadline or bfq"
	}
	return "honoured where the disk's scheduler is mq-deadline or bfq"
}

// tryIOPrio gives a thread of its own the priority and takes it back
// (engine.LockThreadIOPrio), to learn whether the kernel allows it.
func tryIOPrio(prio engine.IOPrio) error {
	done := make(chan error)
	go func() {
		release, err := engine.LockThreadIOPrio(prio)
		if err == nil {
			release()
		}
		done <- err
	}()
	return <-done
}
