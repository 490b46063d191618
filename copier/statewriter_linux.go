package copier

import "sync"

// stateWriter records each barrier's durable prefix (engine.Observer's
// Durable) in the state file, with DST's marks read after the barrier.
// Writing takes two fsyncs, so it runs on a goroutine of its own, never on
// the engine's thread; it writes the latest prefix and skips those that
// came meanwhile.
type stateWriter struct {
	path string
	// marks reads DST's marks now (identity_linux.go); nil, or nil
	// marks, where nothing records DST's writes.
	marks func() *marks
	kick  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	st      resumeState // st.Done is what the file says
	latest  int64
	err     error
	stopped bool
}

// start takes what the state file says and starts writing what the
// barriers make durable.
func (w *stateWriter) start(st resumeState) {
	w.st, w.latest = st, st.Done
	w.kick, w.done = make(chan struct{}, 1), make(chan struct{})
	go w.loop()
}

// Durable takes a barrier's durable prefix, counted from the range start.
func (w *stateWriter) Durable(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.kick == nil {
		return
	}
	w.latest = max(w.latest, n)
	select {
	case w.kick <- struct{}{}:
	default: // a write is due already; it takes the latest
	}
}

func (w *stateWriter) Data(int64, []byte) {}
func (w *stateWriter) Hole(int64, int64)  {}

func (w *stateWriter) loop() {
	defer close(w.done)
	for range w.kick {
		w.write()
	}
	w.write()
}

// write records the latest prefix unless the file says it already.
func (w *stateWriter) write() {
	w.mu.Lock()
	n, done := w.latest, w.st.Done
	w.mu.Unlock()
	if n <= done {
		return
	}
	w.record(n)
}

// record writes the state with n done and DST's marks as they are now;
// the first error is kept.
func (w *stateWriter) record(n int64) error {
	w.mu.Lock()
	st := w.st
	w.mu.Unlock()
	st.Done, st.DstMarks = n, w.marksNow()
	err := writeState(w.path, &st)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return err
	}
	w.st = st
	return nil
}

func (w *stateWriter) marksNow() *marks {
	if w.marks == nil {
		return nil
	}
	return w.marks()
}

// stop writes the last prefix and ends the goroutine; it returns what the
// file says and the first error writing it.
func (w *stateWriter) stop() (int64, error) {
	w.mu.Lock()
	started := w.kick != nil
	if started && !w.stopped {
		close(w.kick)
	}
	w.stopped = true
	w.mu.Unlock()
	if started {
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.Done, w.err
}

// settle records the prefix again, after stop, with DST's marks once
// nothing writes it any more (a stopped or failed copy): a rerun that
// finds them unchanged needs to read nothing to trust the prefix. sync
// makes DST's timestamps durable first (fdatasync leaves them out), so
// that they survive a crash as the state does.
func (w *stateWriter) settle(sync func() error) error {
	if w.marksNow() == nil || sync() != nil {
		return nil // a rerun compares the prefix with SRC instead
	}
	return w.record(w.recorded())
}

// rewind records a smaller prefix than the file says (a verification
// found a bad block in it), after stop.
func (w *stateWriter) rewind(n int64) error {
	return w.record(n)
}

// recorded is what the state file says is done.
func (w *stateWriter) recorded() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.Done
}
