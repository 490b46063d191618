package cdi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// ReadyTimeout is how long CDI's importer waits for IMPORTER_READY_FILE.
const ReadyTimeout = 60 * time.Second

// WaitReady waits until the ready file exists (IMPORTER_READY_FILE, which
// a sidecar creates when it serves the image), looking every poll, for at
// most timeout. "" is ready at once. Running out of time is an error
// whose text is CDI's termination message for it.
func WaitReady(ctx context.Context, path string, timeout, poll time.Duration) error {
	if path == "" {
		return nil
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return &ReadyTimeoutError{Path: path}
		case <-tick.C:
		}
	}
}

// TouchDone creates the done file (IMPORTER_DONE_FILE) after a completed
// import, before the termination message, telling the sidecar it may
// stop. "" is nothing to do; a file already there is left as it is (CDI's
// importer only logs that).
func TouchDone(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadyTimeoutError is WaitReady running out of time. Its text is CDI's
// termination message for it.
type ReadyTimeoutError struct{ Path string }

func (e *ReadyTimeoutError) Error() string { return "Timeout waiting for file " + e.Path }
