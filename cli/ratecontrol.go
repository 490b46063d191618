package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/internal/safedir"
	"github.com/ringcp/ringcp/internal/units"
)

// Changing the rate cap of a running copy, the way pv -R does it for pv:
//
//	ringcp rate PID 20M    # new cap for the copy of process PID
//	ringcp rate PID 0      # no cap
//	ringcp rate PID        # show its cap
//
// Every copy keeps a control file, RUNDIR/ringcp-PID.rate, with its
// process's start time and its cap. `ringcp rate` checks that PID is
// still the process that made the file (a recycled PID is never
// signalled), writes the new cap into the file, and sends SIGUSR2; the
// copy reads the file, applies the cap, and writes back what it applied.
// The file exists only while the copy runs; `ringcp rate` refuses a PID
// without one, so no other program ever gets a SIGUSR2 (whose default
// action would end it). RUNDIR is $RINGCP_RUNDIR, else /run/ringcp for
// root, else $XDG_RUNTIME_DIR/ringcp, else /tmp/ringcp-UID; it is made
// 0700, and `ringcp rate` reads only its own user's RUNDIR and files, so
// only the copy's own user changes its cap: not root either, whose RUNDIR
// is another (a copy of another user's is refused, naming its owner).
//
// /tmp/ringcp-UID is a name any local user can take first. So RUNDIR is
// opened once, and used only if it is this user's alone (a folder, not a
// symlink, owned by the effective user, writable by nobody else:
// safedir.OpenPrivate); every file in it is made through that descriptor
// with O_EXCL|O_NOFOLLOW and read only if it is this user's. Issue 20: a
// folder another user made, with a symlink named like the control file's
// temporary, had a victim's `ringcp rate` truncate any file of the
// victim's.

// rateSignal asks a running copy to reread its control file.
const rateSignal = syscall.SIGUSR2

// runDir is where control files live.
func runDir() string {
	switch {
	case os.Getenv("RINGCP_RUNDIR") != "":
		return os.Getenv("RINGCP_RUNDIR")
	case os.Geteuid() == 0:
		return "/run/ringcp"
	case os.Getenv("XDG_RUNTIME_DIR") != "":
		return filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "ringcp")
	}
	return filepath.Join(os.TempDir(), "ringcp-"+strconv.Itoa(os.Geteuid()))
}

// controlName is the name of pid's control file in RUNDIR.
func controlName(pid int) string { return fmt.Sprintf("ringcp-%d.rate", pid) }

// openRunDir opens RUNDIR, making it where it is missing, and refuses it
// unless it is this user's alone.
func openRunDir() (*safedir.Dir, error) {
	path := runDir()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return safedir.OpenPrivate(path)
}

// control is the content of a control file.
type control struct {
	start int64 // the process's start time, field 22 of /proc/PID/stat
	rate  int64 // the cap in bytes per second, 0 for none
}

func (c control) String() string {
	return fmt.Sprintf("start %d\nmax_rate %d\n", c.start, c.rate)
}

func parseControl(data string) (control, error) {
	var c control
	_, err := fmt.Sscanf(data, "start %d\nmax_rate %d\n", &c.start, &c.rate)
	if err != nil || c.rate < 0 {
		return c, fmt.Errorf("not a ringcp control file: %q", strings.TrimSpace(data))
	}
	return c, nil
}

// processUID is the effective user of process pid, from the Uid line
// of its status (the owner of /proc/PID is root's for a process made
// undumpable by a change of user); false when it cannot be read.
func processUID(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest) // real, effective, saved, filesystem
			if len(f) < 2 {
				return 0, false
			}
			uid, err := strconv.Atoi(f[1])
			return uid, err == nil
		}
	}
	return 0, false
}

// startTime reads a process's start time (clock ticks after boot), which
// tells a process from a later one that got the same PID.
func startTime(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')') // the name may hold spaces and parentheses
	f := strings.Fields(s[end+1:])
	if end < 0 || len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strconv.ParseInt(f[19], 10, 64) // field 22 of the line; f[0] is field 3
}

// writeControl replaces a control file at once (a reader never sees half
// of it), through a temporary name of this process's own (the copy and a
// `ringcp rate` may write at once).
func writeControl(dir *safedir.Dir, name string, c control) error {
	tmp := fmt.Sprintf("%s.%d.new", name, os.Getpid())
	return dir.Replace(name, tmp, []byte(c.String()), 0o600, false)
}

// rateCapped is what `ringcp rate` changes: a copy's Plan, or the Batch
// of --jobs, whose cap is on all its jobs together.
type rateCapped interface {
	MaxRate() int64
	SetMaxRate(bytesPerSecond int64)
}

// rateControl serves the control file of a running copy.
type rateControl struct {
	dir   *safedir.Dir // nil where RUNDIR could not be used
	name  string
	start int64
	plan  rateCapped
	sig   chan os.Signal
	done  chan struct{}
}

// startRateControl makes the copy's control file and applies what
// `ringcp rate` writes there, with a line on stderr, until stop. Where
// the file cannot be made, or RUNDIR is not this user's alone, the copy
// goes on without it and says why.
func startRateControl(plan rateCapped, stderr io.Writer) (stop func()) {
	rc := &rateControl{name: controlName(os.Getpid()), plan: plan, sig: make(chan os.Signal, 1), done: make(chan struct{})}
	// SIGUSR2 is taken first, so that a request that races the file can
	// never end the copy.
	signal.Notify(rc.sig, rateSignal)
	if err := rc.create(); err != nil {
		fmt.Fprintf(stderr, "ringcp: the rate cap cannot be changed while copying (ringcp rate): %v\n", err)
	}
	go rc.serve(stderr)
	return func() {
		signal.Stop(rc.sig)
		close(rc.done)
		if rc.dir != nil {
			rc.dir.Remove(rc.name)
			rc.dir.Close()
		}
	}
}

// create opens RUNDIR and writes the first control file.
func (rc *rateControl) create() error {
	var err error
	if rc.start, err = startTime(os.Getpid()); err != nil {
		return err
	}
	dir, err := openRunDir()
	if err != nil {
		return err
	}
	removeStale(dir)
	if err := writeControl(dir, rc.name, control{start: rc.start, rate: rc.plan.MaxRate()}); err != nil {
		dir.Close()
		return err
	}
	rc.dir = dir
	return nil
}

// removeStale removes the control files of copies that ended without
// removing theirs (killed with SIGKILL): their process is gone, or its PID
// now belongs to another process; and the temporaries of writers that
// were killed.
func removeStale(dir *safedir.Dir) {
	names, _ := dir.Names()
	for _, name := range names {
		pid, writer, ok := parseControlName(name)
		switch {
		case !ok:
		case writer != 0:
			if syscall.Kill(writer, 0) == syscall.ESRCH {
				dir.Remove(name)
			}
		default:
			if _, err := liveControl(dir, pid); err != nil && !errors.Is(err, os.ErrPermission) {
				dir.Remove(name)
			}
		}
	}
}

// parseControlName reads a name in RUNDIR: a control file
// "ringcp-PID.rate" (writer 0), or a temporary "ringcp-PID.rate.WRITER.new"
// that process WRITER is writing.
func parseControlName(name string) (pid, writer int, ok bool) {
	body, ok1 := strings.CutPrefix(name, "ringcp-")
	num, tail, ok2 := strings.Cut(body, ".rate")
	pid, err := strconv.Atoi(num)
	if !ok1 || !ok2 || err != nil || pid <= 0 {
		return 0, 0, false
	}
	if tail == "" {
		return pid, 0, true
	}
	w, ok3 := strings.CutSuffix(tail, ".new")
	writer, err = strconv.Atoi(strings.TrimPrefix(w, "."))
	return pid, writer, ok3 && strings.HasPrefix(w, ".") && err == nil && writer > 0
}

func (rc *rateControl) serve(stderr io.Writer) {
	for {
		select {
		case <-rc.done:
			return
		case <-rc.sig:
			rc.apply(stderr)
		}
	}
}

// apply reads the cap from the control file, applies it and writes back
// what the copy now has.
func (rc *rateControl) apply(stderr io.Writer) {
	if rc.dir == nil {
		return // no control file: nobody may change the cap
	}
	data, err := rc.dir.ReadOwn(rc.name)
	var c control
	if err == nil {
		c, err = parseControl(string(data))
	}
	if err != nil {
		fmt.Fprintf(stderr, "ringcp: %v; the rate cap stays %s\n", err, capString(rc.plan.MaxRate()))
		return
	}
	rc.plan.SetMaxRate(c.rate)
	applied := rc.plan.MaxRate()
	fmt.Fprintf(stderr, "ringcp: rate cap now %s (ringcp rate)\n", capString(applied))
	// The file is written back only when the copy applied another cap
	// than it asked: a `ringcp rate` that wrote the file again after it
	// was read (its signal pending) would otherwise have its cap
	// overwritten by the one before, and the copy would reread that.
	if applied != c.rate {
		writeControl(rc.dir, rc.name, control{start: rc.start, rate: applied})
	}
}

func capString(bps int64) string {
	if bps <= 0 {
		return "none"
	}
	return units.Format(bps) + "/s"
}

// rateCommand is `ringcp rate PID [RATE]`. A PID that is not a running
// copy is refused (exit 2), so no other program gets the signal.
func rateCommand(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		io.WriteString(stdout, rateUsage)
		return errHelp
	}
	args, asJSON := withoutJSON(args)
	pid, rate, err := changeRate(args, stdout, !asJSON)
	if asJSON {
		return writeObject(stdout, newEnvelope("rate", err), err, jsonRate{PID: pid, MaxRate: rate})
	}
	return err
}

const rateUsage = `Usage: ringcp rate [--json] PID [RATE]

Shows the rate cap of the copy (or --jobs batch) running as process PID,
or sets it to RATE, at once and while the copy runs, as --max-rate would
have: 50M is 50 MiB/s, 0 removes the cap. Only PID's own user may change
it, not root either: the control files are each user's own. Exit 0: done;
2: no such copy, another user's, or a bad RATE.

Flags:
      --json                    print one JSON object on stdout: pid, max_rate
  -h, --help                    show this help
`

// jsonRate is `ringcp rate --json`'s body: the copy and its cap after
// the command (bytes per second, 0 for none; -1 when unknown).
type jsonRate struct {
	PID     int   `json:"pid"`
	MaxRate int64 `json:"max_rate"`
}

// changeRate reads the cap of the copy pid names, or sets it; it prints
// the cap read on stdout when say.
func changeRate(args []string, stdout io.Writer, say bool) (pid int, rate int64, err error) {
	if len(args) < 1 || len(args) > 2 {
		return 0, -1, usagef("usage: ringcp rate [--json] PID [RATE]  (RATE like --max-rate: 50M is 50 MiB/s, 0 removes the cap)")
	}
	pid, err = strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		return 0, -1, usagef("rate: %q is not a process ID", args[0])
	}
	dir, err := openRunDir()
	if err != nil {
		return pid, -1, usagef("rate: %v", err)
	}
	defer dir.Close()
	c, err := liveControl(dir, pid)
	if err != nil {
		return pid, -1, usagef("rate: %v", err)
	}
	if len(args) == 1 {
		if say {
			fmt.Fprintf(stdout, "%d\n", c.rate)
		}
		return pid, c.rate, nil
	}
	n, err := units.ParseSize(args[1])
	if err != nil {
		return pid, c.rate, usagef("rate: %q: %v", args[1], err)
	}
	old := c.rate
	c.rate = n
	if err := writeControl(dir, controlName(pid), c); err != nil {
		return pid, old, fmt.Errorf("rate: %w", err)
	}
	if err := syscall.Kill(pid, rateSignal); err != nil {
		return pid, old, fmt.Errorf("rate: signal %d: %w", pid, err)
	}
	return pid, n, nil
}

// liveControl reads the control file of pid, which must be this user's,
// and checks that pid is still the copy that made it.
func liveControl(dir *safedir.Dir, pid int) (control, error) {
	name := controlName(pid)
	data, err := dir.ReadOwn(name)
	if errors.Is(err, os.ErrNotExist) {
		if uid, ok := processUID(pid); ok && uid != os.Geteuid() {
			// Its control file, if it is a copy, is in its user's
			// RUNDIR, which only that user trusts and writes.
			return control{}, fmt.Errorf("process %d runs as uid %d: only that user may change its rate cap (ringcp rate reads %s, this user's)", pid, uid, dir.Path)
		}
		return control{}, fmt.Errorf("process %d is not a running ringcp copy (no %s; a copy makes it once SRC and DST are checked, before its first write)", pid, dir.Join(name))
	}
	if err != nil {
		return control{}, err
	}
	c, err := parseControl(string(data))
	if err != nil {
		return c, fmt.Errorf("%s: %w", dir.Join(name), err)
	}
	if start, err := startTime(pid); err != nil || start != c.start {
		return c, fmt.Errorf("process %d is not the ringcp copy that made %s (it ended; the file is stale)", pid, dir.Join(name))
	}
	return c, nil
}
