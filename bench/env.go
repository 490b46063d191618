package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"
)

// Env is one bench run's place on the machine: its scratch directory, what
// it may do there (root or not), and the undo list that puts the machine
// back (loop devices detached, files removed), also after Ctrl-C.
type Env struct {
	Dir  string    // scratch directory of this run, removed at the end
	Root bool      // euid 0: loop devices and drop_caches work
	Log  io.Writer // progress lines (stderr for the command)
	// Ringcp is the ringcp binary benched, once found ("" before): the
	// sync-ssh workload runs it on its other host too.
	Ringcp string

	undo      []func()
	dropWarn  bool
	keepFiles bool
}

// newEnv makes a fresh run directory inside workDir and checks that the
// filesystem there takes O_DIRECT, which every direct-I/O peer needs.
func newEnv(workDir string, keep bool, log io.Writer) (*Env, error) {
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(workDir, "run-")
	if err != nil {
		return nil, err
	}
	e := &Env{Dir: dir, Root: os.Geteuid() == 0, Log: log, keepFiles: keep}
	e.onClose(func() {
		if !e.keepFiles {
			os.RemoveAll(dir)
		}
	})
	probe := filepath.Join(dir, "odirect-probe")
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o644)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("%s does not take O_DIRECT (tmpfs?); pick another -workdir: %w", workDir, err)
	}
	f.Close()
	os.Remove(probe)
	return e, nil
}

// onClose schedules fn for Close; the last scheduled runs first.
func (e *Env) onClose(fn func()) { e.undo = append(e.undo, fn) }

// Close runs the undo list. It is safe to call more than once.
func (e *Env) Close() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
	e.undo = nil
}

func (e *Env) logf(format string, args ...any) {
	fmt.Fprintf(e.Log, format+"\n", args...)
}

// dropCaches empties the page cache so that no tool reads its source from
// memory (the page cache gives fake read speed on this VM). Without root it
// warns once and goes on: the copies are still checked, the times are not
// worth quoting.
func (e *Env) dropCaches() {
	unix.Sync()
	err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0)
	if err != nil && !e.dropWarn {
		e.dropWarn = true
		e.logf("warning: cannot drop the page cache (%v); times will flatter buffered readers", err)
	}
}

// fdatasync makes path durable the way the harness charges every tool for:
// after a tool exits, its DST is fdatasync'ed inside the timed interval, so
// that no tool looks fast by leaving dirty pages behind. ringcp and
// `cp; sync` have already done it and pay a no-op.
func fdatasync(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = unix.Fdatasync(int(f.Fd()))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// freeBytes is the space an unprivileged writer has left under dir.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 1 << 62 // unknown: let the writes tell
	}
	return int64(st.Bavail) * st.Bsize
}

// machine describes the run's host for the report header.
func machine(dir string) string {
	var u unix.Utsname
	unix.Uname(&u)
	release := strings.TrimRight(string(u.Release[:]), "\x00")
	var st unix.Statfs_t
	fs := "?"
	if unix.Statfs(dir, &st) == nil {
		fs = fsName(st.Type)
	}
	return fmt.Sprintf("Linux %s, %d CPUs (%s), work dir on %s", release, runtime.NumCPU(), cpuName(), fs)
}

// cpuName is the processor's brand and the vector units that set the
// speed of the zero scan (the Go runtime's memequal) and of the
// checksum's BLAKE2b (x/crypto): they pick them themselves; cpuid names
// them here so that results from two machines can be told apart.
func cpuName() string {
	c := cpuid.CPU
	name := strings.TrimSpace(c.BrandName)
	if name == "" {
		name = c.VendorString
	}
	for _, u := range []struct {
		id   cpuid.FeatureID
		name string
	}{{cpuid.AVX2, "AVX2"}, {cpuid.AVX512F, "AVX-512"}, {cpuid.ASIMD, "NEON"}} {
		if c.Supports(u.id) {
			name += ", " + u.name
		}
	}
	return name
}

func fsName(magic int64) string {
	switch magic {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	}
	return fmt.Sprintf("fs 0x%x", magic)
}

// isNotExist reports a missing file through any wrapping.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
