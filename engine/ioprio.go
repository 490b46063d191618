package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// IOPrio is a Linux I/O priority as ioprio_set(2) and an SQE's ioprio
// field take it: a class in bits 13-15, a level (0 highest, 7 lowest) in
// bits 0-2. The zero value (IOPRIO_CLASS_NONE) leaves the priority as
// the kernel derives it from the thread's CPU nice value.
//
// Schedulers that honour it: mq-deadline (since 5.14, with aging: an
// idle request waits at most its prio_aging_expire, 10 s by default) and
// BFQ. "none" and kyber ignore it, and so do devices without a scheduler
// (loop devices queue to their backing file).
type IOPrio uint16

// I/O priority classes (include/uapi/linux/ioprio.h).
const (
	IOPrioClassRT   = 1 // real time: served before anything else; needs CAP_SYS_ADMIN or CAP_SYS_NICE
	IOPrioClassBE   = 2 // best effort: the default class, levels 0-7
	IOPrioClassIdle = 3 // idle: served only when no other class waits
)

const (
	ioprioClassShift = 13
	ioprioLevelMask  = 7
	// ioprioDefaultLevel is what ionice uses when no level is given.
	ioprioDefaultLevel = 4
)

// NewIOPrio builds a priority of class (IOPrioClassRT, BE or Idle) and
// level (0-7; ignored for idle).
func NewIOPrio(class, level int) IOPrio {
	if class == IOPrioClassIdle {
		level = 0
	}
	return IOPrio(class<<ioprioClassShift | level&ioprioLevelMask)
}

// Class is the priority's class, 0 for none.
func (p IOPrio) Class() int { return int(p >> ioprioClassShift) }

// Level is the priority's level within its class.
func (p IOPrio) Level() int { return int(p & ioprioLevelMask) }

// String renders p as ParseIOPrio reads it: "idle", "be:4", "rt:0"; ""
// for none.
func (p IOPrio) String() string {
	switch p.Class() {
	case 0:
		return ""
	case IOPrioClassIdle:
		return "idle"
	case IOPrioClassBE:
		return "be:" + strconv.Itoa(p.Level())
	case IOPrioClassRT:
		return "rt:" + strconv.Itoa(p.Level())
	}
	return fmt.Sprintf("class%d:%d", p.Class(), p.Level())
}

// ParseIOPrio reads "idle", "be", "be:N", "rt" or "rt:N" (N from 0,
// the highest, to 7), as ionice's -c/-n name them; "be" and "rt" alone
// take level 4, as ionice does. "" is no priority (0).
func ParseIOPrio(s string) (IOPrio, error) {
	name, level, hasLevel := strings.Cut(s, ":")
	class := map[string]int{"rt": IOPrioClassRT, "be": IOPrioClassBE, "idle": IOPrioClassIdle}[name]
	switch {
	case s == "":
		return 0, nil
	case class == 0:
		return 0, fmt.Errorf("I/O priority %q: want idle, be[:0-7] or rt[:0-7]", s)
	case !hasLevel:
		return NewIOPrio(class, ioprioDefaultLevel), nil
	case class == IOPrioClassIdle:
		return 0, fmt.Errorf("I/O priority %q: the idle class has no levels", s)
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 0 || n > 7 || len(level) != 1 {
		return 0, fmt.Errorf("I/O priority %q: the level is 0 (highest) to 7 (lowest)", s)
	}
	return NewIOPrio(class, n), nil
}
