package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The busy workload under a given I/O scheduler (issue 27): busy-mq-
// deadline and busy-bfq set the scheduler of the disk under the work
// directory for the workload's runs and put the one it had back after
// them (also when the bench is stopped: Env's undo list). mq-deadline
// and bfq honour I/O priorities (ionice, --ioprio); none, a virtio
// disk's default, does not.

// setupBusySched is setupBusy under scheduler sched.
func setupBusySched(sched string) func(e *Env, src *Source) (*Pair, error) {
	return func(e *Env, src *Source) (*Pair, error) {
		if !e.Root {
			return nil, fmt.Errorf("%w: setting the I/O scheduler needs root", errSkip)
		}
		restore, err := setScheduler(e.Dir, sched)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errSkip, err)
		}
		e.onClose(restore) // should the bench stop before the pair closes
		e.logf("workload busy-%s: scheduler %s on the disk under %s", sched, sched, e.Dir)
		p, err := setupBusy(e, src)
		if err != nil {
			restore()
			return nil, err
		}
		close := p.Close
		p.Close = func() { close(); restore() }
		return p, nil
	}
}

// setScheduler sets the scheduler of the whole disk that holds dir, and
// returns what puts the old one back (once, however often it is called).
func setScheduler(dir, sched string) (func(), error) {
	file, err := schedulerFile(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	old, offered := currentScheduler(string(b))
	if !strings.Contains(" "+strings.ReplaceAll(strings.ReplaceAll(string(b), "[", ""), "]", "")+" ", " "+sched+" ") {
		return nil, fmt.Errorf("%s offers %q, not %s (modprobe %s-iosched?)", file, strings.TrimSpace(offered), sched, sched)
	}
	if err := os.WriteFile(file, []byte(sched), 0); err != nil {
		return nil, fmt.Errorf("setting %s to %s: %w", file, sched, err)
	}
	done := false
	return func() {
		if done {
			return
		}
		done = true
		if err := os.WriteFile(file, []byte(old), 0); err != nil {
			fmt.Fprintf(os.Stderr, "bench: could not put the scheduler %s back in %s: %v\n", old, file, err)
		}
	}, nil
}

// currentScheduler is the bracketed name of a scheduler file ("none
// [mq-deadline] bfq"), and the file's text.
func currentScheduler(text string) (string, string) {
	for _, f := range strings.Fields(text) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			return strings.Trim(f, "[]"), text
		}
	}
	return "", text
}

// schedulerFile is /sys/block/DISK/queue/scheduler of the whole disk
// under dir (a partition's parent).
func schedulerFile(dir string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", err
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		return "", fmt.Errorf("%s is on no block device (%s): %w", dir, sys, err)
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	}
	file := filepath.Join(real, "queue", "scheduler")
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("%s has no scheduler file: %w", real, err)
	}
	return file, nil
}
