package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// Progress formats (--progress). The machine formats are stable: the
// README documents them, and tests read them with the expressions of the
// programs that parse them.
const (
	progressAuto    = "auto"    // the human line, when stderr is a terminal
	progressAlways  = "always"  // the human line, always
	progressNone    = "none"    // nothing
	progressJSON    = "json"    // one copier.Status JSON object a line (stderr)
	progressQemu    = "qemu"    // qemu-img convert -p: "    (12.34/100%)\r" (stdout)
	progressPercent = "percent" // nbdcopy --progress=FD: "12/100\n" (stderr)
)

var progressModes = []string{progressAuto, progressAlways, progressNone, progressJSON, progressQemu, progressPercent}

// humanEvery is how often the human line is redrawn: a few times a second
// reads as live without costing anything. Machine formats default to
// copier.DefaultProgressInterval (1 s).
const humanEvery = 250 * time.Millisecond

// progressConfig is --progress, --progress-interval and --progress-fd.
type progressConfig struct {
	mode     string
	interval time.Duration // 0: the format's default
	fd       int           // -1: the format's default stream
	json     bool          // --json: stdout holds the report alone
}

// progressSink renders copier.Status updates in one format. update is
// called by copier (OnProgress) from one goroutine at a time; end after
// Run returned.
type progressSink interface {
	update(s copier.Status)
	end()
}

// startProgress wires the chosen format into opts. out is where it
// writes; stderr and stdout are the command's streams (a descriptor of
// --progress-fd otherwise). It returns the function to call after Run,
// and whether a line is being redrawn on stderr (which a status line
// then clears first).
func startProgress(pc progressConfig, opts *copier.Options, stdout, stderr io.Writer) (end func(), redrawn bool) {
	sink, every := newSink(pc, stdout, stderr)
	if sink == nil {
		return func() {}, false
	}
	if pc.interval > 0 {
		every = pc.interval
	}
	opts.OnProgress, opts.ProgressInterval = sink.update, every
	_, redrawn = sink.(*humanSink)
	return sink.end, redrawn && pc.fd < 0
}

func newSink(pc progressConfig, stdout, stderr io.Writer) (progressSink, time.Duration) {
	out := stderr
	if pc.mode == progressQemu && !pc.json {
		out = stdout // where qemu-img -p writes, and where Proxmox reads it
	}
	if pc.fd >= 0 {
		out = os.NewFile(uintptr(pc.fd), fmt.Sprintf("fd %d", pc.fd))
	}
	every := copier.DefaultProgressInterval
	switch pc.mode {
	case progressJSON:
		return &jsonSink{w: out}, every
	case progressQemu:
		return &qemuSink{w: out}, every
	case progressPercent:
		return &percentSink{w: out, last: -1}, every
	case progressAlways:
		return &humanSink{w: out}, humanEvery
	case progressAuto:
		if isTerminal(out) {
			return &humanSink{w: out}, humanEvery
		}
	}
	return nil, 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// jsonSink writes one copier.Status object a line: the stable format of
// --progress json.
type jsonSink struct{ w io.Writer }

func (j *jsonSink) update(s copier.Status) {
	b, _ := json.Marshal(s) // a struct of numbers and a phase name: cannot fail
	j.w.Write(append(b, '\n'))
}

func (j *jsonSink) end() {}

// qemuSink writes what qemu-img convert -p writes: "    (12.34/100%)\r",
// one record per write (Incus parses each write on its own), and a
// newline at the end. 100.00 comes only when the copy is done.
type qemuSink struct{ w io.Writer }

func (q *qemuSink) update(s copier.Status) {
	fmt.Fprintf(q.w, "    (%.2f/100%%)\r", s.Percent)
}

func (q *qemuSink) end() { q.w.Write([]byte("\n")) }

// percentSink writes what nbdcopy --progress=FD writes: "N/100\n", a
// whole percentage, each time it changes.
type percentSink struct {
	w    io.Writer
	last int
}

func (p *percentSink) update(s copier.Status) {
	n := int(s.Percent)
	if n == p.last {
		return
	}
	p.last = n
	fmt.Fprintf(p.w, "%d/100\n", n)
}

func (p *percentSink) end() {}

// humanSink redraws one line on a terminal and erases it at the end;
// the summary line replaces it. Status lines (SIGUSR1) share its writer.
type humanSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *humanSink) update(s copier.Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.w, "\r\033[K%s", humanLine(s))
}

func (h *humanSink) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprint(h.w, "\r\033[K")
}

// humanLine: "copying  1.50 GiB / 4.00 GiB  37%  512.3 MB/s  ETA 0:05".
// The rate is copier's, smoothed over a few seconds. What the copy waits
// for says so, instead of a rate that reads as a stall.
func humanLine(s copier.Status) string {
	head := fmt.Sprintf("%-9s %s / %s  %3.0f%%", phaseWord(s.Phase), units.Format(s.BytesDone), units.Format(s.BytesTotal), math.Floor(s.Percent))
	if s.BytesTotal < 0 { // a stream: its size is known at its end
		head = fmt.Sprintf("%-9s %s / ?", phaseWord(s.Phase), units.Format(s.BytesDone))
	}
	if s.BytesIn > 0 { // a compressed SRC: what came in
		head += fmt.Sprintf("  (%s read)", units.Format(s.BytesIn))
	}
	switch s.Phase {
	case copier.PhaseMap:
		return head + "  flushing SRC before mapping its holes"
	case copier.PhaseSync:
		return head + "  waiting for DST's fdatasync"
	case copier.PhaseDone:
		return head
	}
	return fmt.Sprintf("%s  %.1f MB/s  ETA %s", head, s.BytesPerSecond/1e6, etaText(s.ETASeconds))
}

func phaseWord(p copier.Phase) string {
	switch p {
	case copier.PhaseMap:
		return "mapping"
	case copier.PhaseCopy:
		return "copying"
	case copier.PhaseSync:
		return "syncing"
	case copier.PhaseVerify:
		return "verifying"
	}
	return p.String()
}

// etaText: "0:05", "1:02:03", "-" while unknown.
func etaText(secs float64) string {
	if secs < 0 {
		return "-"
	}
	s := int(math.Ceil(secs))
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
