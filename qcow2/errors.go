package qcow2

import (
	"errors"
	"fmt"
)

// The causes an *Error unwraps to, for errors.Is. Every one of them is a
// refusal: the image cannot or must not be read (or written) as it is, and
// nothing was done to it. A caller turns them into its "refused" exit.
var (
	// ErrNotQcow2: the magic bytes are not QFI\xfb.
	ErrNotQcow2 = errors.New("not a qcow2 image")
	// ErrUnsupported: a valid image that uses what this package does not
	// implement (an unknown incompatible feature, a format of a backing
	// file other than qcow2 or raw).
	ErrUnsupported = errors.New("unsupported qcow2 feature")
	// ErrEncrypted: AES or LUKS encryption.
	ErrEncrypted = errors.New("encrypted qcow2 image")
	// ErrDirty: the incompatible dirty bit is set (lazy refcounts, QEMU
	// stopped without closing the image): its refcounts need repair.
	ErrDirty = errors.New("dirty qcow2 image")
	// ErrCorruptBit: QEMU found the image corrupt and marked it so.
	ErrCorruptBit = errors.New("qcow2 image marked corrupt")
	// ErrMalformed: the metadata contradicts itself or the file (a table
	// outside the file, overlapping tables, a field out of range).
	ErrMalformed = errors.New("malformed qcow2 image")
	// ErrBackingLoop: a backing chain that comes back to one of its files.
	ErrBackingLoop = errors.New("qcow2 backing chain loops")
	// ErrChainTooDeep: a backing chain deeper than Options.MaxDepth.
	ErrChainTooDeep = errors.New("qcow2 backing chain too deep")
	// ErrBackingRefused: the Opener would not open a backing or data file
	// (the caller's policy, or the file is missing).
	ErrBackingRefused = errors.New("qcow2 backing file not opened")
)

// Error is a refusal: what is wrong with which file, and what to do. It
// unwraps to one of the Err variables above, and to the cause beneath
// (an I/O error while reading the metadata, the Opener's error).
type Error struct {
	Name  string // the file: the image, or a backing file in its chain
	Cause error  // one of the Err variables of this package
	What  string // what was found, in the image's terms
	Hint  string // what to do about it; may be empty
	Err   error  // the error beneath, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %v: %s", e.Name, e.Cause, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap gives both the cause and the error beneath.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}

// IsRefusal tells whether err says an image was refused (an *Error),
// rather than an I/O failure while reading or writing it.
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// malformed is the most common refusal.
func malformed(name, format string, args ...any) *Error {
	return &Error{Name: name, Cause: ErrMalformed, What: fmt.Sprintf(format, args...),
		Hint: "check it with qemu-img check"}
}

// IOError is a failed read or write of a host file: the op, the file, the
// host offset and the cause (an errno from an *os.File unwraps through
// it). It is not a refusal.
type IOError struct {
	Op   string // "read", "write", "decompress", ...
	Name string
	Off  int64
	Err  error
}

func (e *IOError) Error() string {
	return fmt.Sprintf("%s %s at offset %d: %v", e.Op, e.Name, e.Off, e.Err)
}

func (e *IOError) Unwrap() error { return e.Err }
