package copier

import "errors"

// A resumed sync (Options.Sync with Options.Resume) keeps the copy's
// state file and its trust rules (resume_linux.go, resumecheck_linux.go):
// the state records the prefix of the range that a completed fdatasync
// of DST covers, with SRC's and DST's identities and DST's marks, in a
// file owned by the user, not writable by others, with its own SHA-256.
// What the prefix means for a sync: every granule of it was compared
// with SRC and, where it differed, written, before that barrier. A rerun
// whose state is trusted (the same SRC and DST, DST's marks as recorded:
// a sync stopped by a signal or a failure records them last) neither
// reads nor writes the prefix, and goes on from there.
//
// Where a copy would compare the prefix before going on, or refuse, a
// sync starts over instead: after a kill -9 or a crash (DST's marks are
// newer than the state's), on a disk that keeps no marks, when SRC or
// DST changed since, the prefix is what the sync does anyway: read both
// ends and write only what differs. So a DST changed between runs, even
// in the prefix, ends equal to SRC, and nothing is refused that a fresh
// sync would do. A range or size policy other than the state's is still
// refused: that is a different sync, and its state file says so.

// syncStartsOver turns sameCopy's refusal of a changed SRC or DST into a
// fresh start, for a sync; other errors, and every error of a copy, are
// returned as they are.
func (p *Plan) syncStartsOver(err error) error {
	var r *RefusedError
	if !p.changed.syncing || !errors.As(err, &r) || r.Kind != KindChanged || r.Path == "" {
		return err
	}
	p.startOver(r.Reason)
	return nil
}

// startOver drops the state a resumed sync found: the sync runs from the
// range's start, and records a state of its own.
func (p *Plan) startOver(why string) {
	p.note("resume: %s: the sync starts from the beginning (it writes only what differs)", why)
	p.resume.from, p.resume.state = 0, nil
}
