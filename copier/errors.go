package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/httpobj"
)

// RefusedError is a copy refused before anything was written: bad input,
// an unsafe target, or something the copy needs that could not be had.
// DST is as it was. A program branches on Kind (and on Err with errors.Is,
// e.g. syscall.ENOENT for a missing SRC); Field names the Options field at
// fault, so that a front end can speak of its own flags instead (the
// ringcp command turns "Options.SrcOffset" in Reason into --src-offset).
// The ringcp command exits 2 on it.
type RefusedError struct {
	Kind   Kind
	Path   string // the path at fault, or "" when the options are
	Field  string // the Options field at fault ("SrcOffset", "Dst"), or ""
	Reason string // what is wrong, naming fields as Options.Name
	Err    error  // the errno (or error) behind it, if any
	// Length is the range's length when Prepare had measured it before
	// refusing, else 0; Needed, for KindTooSmall, the bytes DST must
	// hold (the copy's end in DST).
	Length int64
	Needed int64
}

func (e *RefusedError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Kind says what sort of refusal a RefusedError is. The values are stable
// strings (the ringcp command prints them in --json): new kinds may be
// added, none is renamed.
type Kind string

// Kinds of refusal.
const (
	// KindBadInput: an option's value, or a range, that cannot be copied
	// as given (a range past SRC's end, an unknown mode, a stream).
	KindBadInput Kind = "bad_input"
	// KindNotFound: SRC, DST's folder, or (in /dev) DST does not exist,
	// or DST is a dangling symlink.
	KindNotFound Kind = "not_found"
	// KindNotSupported: not a regular file or block device, a pseudo
	// filesystem, or an option this system or these ends cannot do
	// (io_uring asked for where it is unavailable, O_DIRECT always where
	// it is not possible, any copy on a system other than Linux).
	KindNotSupported Kind = "not_supported"
	// KindPermission: DST may not be written (permissions, a read-only
	// filesystem, append-only or immutable), SRC may not be read.
	KindPermission Kind = "permission"
	// KindMounted: DST, or a disk, partition or loop device sharing its
	// bytes, is mounted or active swap. Options.Force never lifts it.
	KindMounted Kind = "mounted"
	// KindInUse: DST is held by device-mapper, LVM, md or bcache, opened
	// exclusively by another program, behind a loop device, or a running
	// program. Options.Force lifts it.
	KindInUse Kind = "in_use"
	// KindLocked: another program holds locks on DST (QEMU, flock, an
	// fcntl write lock, another ringcp), or writes SRC.
	KindLocked Kind = "locked"
	// KindOverlap: SRC and DST share bytes the copy reads and writes.
	KindOverlap Kind = "overlap"
	// KindTooSmall: a block device DST smaller than the copy's end, or a
	// copy ending past the largest file DST's filesystem allows.
	KindTooSmall Kind = "too_small"
	// KindNoRoom: DST's filesystem clearly lacks the free space.
	KindNoRoom Kind = "no_room"
	// KindImageFormat: SRC is a disk image container ringcp does not
	// read (vmdk...), or a qcow2 image it cannot read as its guest sees
	// it (encrypted, dirty, damaged, a backing file not followed), not
	// raw disk bytes (Options.SrcFormat "raw" copies it as it is).
	KindImageFormat Kind = "image_format"
	// KindChanged: SRC or DST changed between Prepare and Run (renamed or
	// replaced).
	KindChanged Kind = "changed"
	// KindResources: open files, memory for the buffers or the io_uring
	// ring ran out before the copy started.
	KindResources Kind = "resources"
	// KindCheckFailed: a check the copy depends on could not be made (a
	// stat, the mount table, a lock test failed): ringcp does not guess.
	KindCheckFailed Kind = "check_failed"
)

// refusal builds a RefusedError; the helpers below set its Field and
// cause.
func refuse(kind Kind, path, reason string) *RefusedError {
	return &RefusedError{Kind: kind, Path: shown(path), Reason: reason}
}

// on names the Options field at fault.
func (e *RefusedError) on(field string) *RefusedError {
	e.Field = field
	return e
}

// shown is an operand as messages and reports give it: a URL without its
// credentials (the password of its userinfo, a presigned signature), which
// Options.Src holds as given.
func shown(operand string) string { return httpobj.RedactOperand(operand) }

// SrcChangedError is a copy (or a read pass: Checksum, Compare) that ran
// to its end while something wrote a file it read: SRC itself, a loop
// device SRC's backing file, a file of an image SRC's chain (a backing
// file, its data file). What it read is neither the file's old content
// nor its new one. A new DST is discarded; an existing one (Mixed)
// holds that mix, and Report.DstState is DstMixed. The ringcp command
// exits 1 on it.
type SrcChangedError struct {
	Path string // the file that changed
	// What names it in the message: "SRC /a.img", "SRC's backing file
	// /base.raw", "SRC /dev/loop0's backing file /a.img".
	What string
	// Why says what changed: its size, mtime or ctime, from what to what.
	Why string
	// Mixed: DST existed, and holds what the copy wrote.
	Mixed bool
	// Of, for a read pass (Checksum, Compare), names what it made of
	// the file ("the checksum"); "" for a copy.
	Of string
}

func (e *SrcChangedError) Error() string {
	left := "the copy is neither its old nor its new content"
	switch {
	case e.Of != "":
		left = e.Of + " is of neither its old nor its new content"
	case e.Mixed:
		left = "DST holds a mix of its old and new content"
	}
	return fmt.Sprintf("%s changed while it was read (%s): %s; copy from a snapshot or a file nothing writes", e.What, e.Why, left)
}
