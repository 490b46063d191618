package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"syscall"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// jsonSchema is the version of the --json format, the same for every
// command (schema/ringcp-output.schema.json describes it). Fields are
// added, never renamed or removed, and keep their meaning: that is no new
// schema. Only a change that breaks a reader is: 2 made the error an
// object and every time an integer of milliseconds.
const jsonSchema = 2

// envelope opens every --json object, of every command and outcome:
// which format, which ringcp, which command, what became of it and the
// exit code, and on anything but success the error. The command's own
// fields follow in the same object (writeObject).
type envelope struct {
	Schema   int        `json:"schema"`
	Version  string     `json:"version"`
	Command  string     `json:"command"`   // copy, jobs, verify, checksum, dd, rate, version, info
	Outcome  string     `json:"outcome"`   // complete, refused, failed, interrupted
	ExitCode int        `json:"exit_code"` // the command's exit code
	Error    *jsonError `json:"error,omitempty"`
}

// jsonError is why a command did not complete, the same for every
// command: kind is a copier.Kind for a refusal, else mismatch,
// interrupted or failed; field and flag name the option at fault, errno
// the errno behind it ("" when none).
type jsonError struct {
	Kind    string `json:"kind"`
	Field   string `json:"field"`
	Flag    string `json:"flag"`
	Message string `json:"message"`
	Errno   string `json:"errno"`
	Path    string `json:"path"`
	// Needed is what a too_small DST must hold, in bytes.
	Needed int64 `json:"needed,omitempty"`
	// Op and Offset say what failed where, for a read or write that
	// failed (an engine.OpError: "pwrite", "fallocate"...).
	Op     string `json:"op,omitempty"`
	Offset *int64 `json:"offset,omitempty"`
}

// Error kinds that are not refusals.
const (
	kindMismatch    = "mismatch"
	kindInterrupted = "interrupted"
	kindFailed      = "failed"
)

func newEnvelope(command string, err error) envelope {
	return envelope{Schema: jsonSchema, Version: moduleVersion(), Command: command,
		Outcome: outcome(err), ExitCode: exitCode(err), Error: errorJSON(err)}
}

// errorJSON is err as --json says it; nil for success (and --help).
func errorJSON(err error) *jsonError {
	if err == nil || errors.Is(err, errHelp) {
		return nil
	}
	e := &jsonError{Message: message(err), Errno: errnoOf(err)}
	var (
		refused     *copier.RefusedError
		syncRefused *blocksync.RefusedError // a sync across hosts', on either host
	)
	switch {
	case errors.As(err, &refused):
		e.Kind, e.Field, e.Flag, e.Path, e.Needed = string(refused.Kind), refused.Field, flagOf(refused.Field), refused.Path, refused.Needed
	case errors.As(err, &syncRefused):
		e.Kind, e.Path = string(syncRefused.Kind), syncRefused.Path
	case exitCode(err) == exitRefused:
		e.Kind = string(copier.KindBadInput) // a command line that could not be read
		e.Flag, e.Field = flagInMessage(e.Message)
	case exitCode(err) == exitMismatch:
		e.Kind = kindMismatch
	case exitCode(err) > exitInterrupted:
		e.Kind = kindInterrupted
	default:
		e.Kind = kindFailed
	}
	var changed *copier.SrcChangedError
	if errors.As(err, &changed) {
		e.Path = changed.Path
	}
	var op *engine.OpError
	if errors.As(err, &op) {
		e.Op, e.Path, e.Offset = op.Op, op.Path, &op.Offset
	}
	var syncOp *blocksync.OpError
	if errors.As(err, &syncOp) {
		e.Op, e.Path, e.Offset = syncOp.Op, syncOp.Path, &syncOp.Offset
	}
	var fe *flagError
	if errors.As(err, &fe) { // said where the flag's value was refused: surer than a message
		e.Flag = fe.flag
	}
	return e
}

// pflagFlag finds the flag in pflag's messages: `invalid argument "0"
// for "-q, --queue-depth" flag`, `flag needs an argument: --jobs`.
var pflagFlag = regexp.MustCompile(`for "(?:-\w, )?(--[\w-]+)" flag|argument: (--[\w-]+)|unknown flag: (--[\w-]+)`)

// ownFlag finds the flag in ringcp's own refusals of a flag's value,
// which begin with it: `--progress-interval 0s: must be more than 0`.
var ownFlag = regexp.MustCompile(`^(--[a-z][\w-]*)[ :]`)

// flagInMessage is the flag a usage error names, and the Options field
// it sets ("" for a command's own flag).
func flagInMessage(msg string) (flag, field string) {
	if m := pflagFlag.FindStringSubmatch(msg); m != nil {
		flag = m[1] + m[2] + m[3]
	} else if m := ownFlag.FindStringSubmatch(msg); m != nil {
		flag = m[1]
	} else {
		return "", ""
	}
	for _, f := range optionFlags {
		if "--"+f.name == flag {
			field = f.field
		}
	}
	return flag, field
}

// outcome names what happened, as exitCode decides it.
func outcome(err error) string {
	switch exitCode(err) {
	case exitOK:
		return "complete"
	case exitRefused:
		return "refused"
	case ExitFailed, exitMismatch:
		return "failed"
	}
	return "interrupted"
}

// errnoOf names the errno behind err, if there is one.
func errnoOf(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return ""
}

// writeObject prints env and the command's fields (bodies: structs that
// marshal to JSON objects, none naming an envelope field) as one object
// on one line, and returns err, the command's outcome, joined with a
// failure to write.
func writeObject(w io.Writer, env envelope, err error, bodies ...any) error {
	out, jerr := spliceObjects(append([]any{env}, bodies...)...)
	if jerr == nil {
		_, jerr = w.Write(append(out, '\n'))
	}
	if jerr != nil {
		return errors.Join(err, fmt.Errorf("writing JSON: %w", jerr))
	}
	return err
}

// spliceObjects marshals each part, a JSON object, and joins their fields
// into one object, in order.
func spliceObjects(parts ...any) ([]byte, error) {
	out := []byte{'{'}
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		b = bytes.TrimSpace(b)
		if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
			return nil, fmt.Errorf("%T is not a JSON object", p)
		}
		if inner := b[1 : len(b)-1]; len(inner) > 0 {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, inner...)
		}
	}
	return append(out, '}'), nil
}
