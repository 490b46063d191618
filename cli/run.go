package cli

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/expectsum"
)

// Exit codes, documented in the README and in --help. They are decided
// here alone (exitCode), from the error a command returns; main.go exits
// with what Run returns.
const (
	exitOK          = 0
	ExitFailed      = 1   // the copy failed while running (main.go's exit on a panic too)
	exitRefused     = 2   // bad input or unsafe target; nothing written
	exitMismatch    = 3   // verification found a difference
	exitInterrupted = 128 // plus the signal number: 129 SIGHUP, 130 SIGINT, 143 SIGTERM
)

// Run is the whole command, with its streams, so tests can call it. Each
// command returns an error; Run prints it unless the command already did,
// and turns it into the exit code. It first refuses to start with too few
// free descriptors (checkDescriptors).
func Run(args []string, stdout, stderr io.Writer) int {
	err := checkDescriptors()
	if err == nil {
		err = dispatch(args, stdout, stderr)
	}
	var shown *reported
	if err != nil && !errors.Is(err, errHelp) && !errors.As(err, &shown) {
		fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	}
	return exitCode(err)
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		case "dd":
			return runDD(args[1:], stdout, stderr)
		case "completion":
			return completionCommand(args[1:], stdout)
		case "man":
			return manCommand(args[1:], stdout)
		case "sync":
			return runSync(args[1:], stdout, stderr)
		case "info":
			return runInfo(args[1:], stdout, stderr)
		case "cdi-importer":
			return runCDIImporter(args[1:], stdout, stderr)
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageShort)
		return &reported{usagef("no operands")}
	}
	if read := readCommands[args[0]]; read != nil {
		return read(args[1:], stdout, stderr)
	}
	if args[0] == "rate" {
		return rateCommand(args[1:], stdout)
	}
	cfg, err := parseArgs(args, stdout)
	switch {
	case err != nil && wantsJSON(args):
		return badLineJSON(args, stdout, stderr, cfg, err)
	case err != nil:
		return err
	case cfg.version:
		return printVersion(stdout, cfg.json)
	}
	if err := cfg.sync.onlyForSync(); err != nil {
		return err
	}
	if cfg.jobs != "" {
		return jobsCommand(cfg, stdout, stderr)
	}
	return copyCommand(cfg, stdout, stderr)
}

// exitCode is the one place an outcome becomes an exit code.
func exitCode(err error) int {
	var (
		intr     *interruptedError
		mismatch *mismatchError
		verify   *copier.MismatchError
		expected *expectsum.MismatchError
		refused  *copier.RefusedError
		usage    *usageError
		status   *exitStatus
	)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &status):
		return status.code
	case errors.As(err, &intr):
		return exitInterrupted + int(intr.sig)
	case errors.As(err, &mismatch), errors.As(err, &verify), errors.As(err, &expected):
		return exitMismatch
	case errors.As(err, &refused), errors.As(err, &usage):
		return exitRefused
	}
	return ExitFailed
}

// errHelp: --help (or demo --help) was shown; exit 0.
var errHelp = errors.New("help shown")

// usageError is a command line that could not be read: exit 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// interruptedError is a copy stopped by a signal: exit 128+signal.
type interruptedError struct {
	sig syscall.Signal
	err error
}

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

// mismatchError is a copy that read back different from SRC: exit 3.
type mismatchError struct{ src, dst string }

func (e *mismatchError) Error() string { return fmt.Sprintf("%s differs from %s", e.dst, e.src) }

// flagError is an error about the value of a command's own flag (a
// --jobs list that cannot be read): --json names the flag.
type flagError struct {
	flag string
	err  error
}

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// reported wraps an error whose lines the command has already printed
// (with what DST holds after it): run prints nothing more.
type reported struct{ err error }

func (e *reported) Error() string { return e.err.Error() }
func (e *reported) Unwrap() error { return e.err }
