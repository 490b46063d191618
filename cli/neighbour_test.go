package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestNeighbourOutput: the summary says when others held the copy back
// (and its floor kept it moving), and only then; the report's JSON
// carries the good neighbour's window and least latency, null without.
func TestNeighbourOutput(t *testing.T) {
	held := &copier.NeighbourReport{MinBytes: 1 << 20, MedianBytes: 8 << 20, MaxBytes: 64 << 20, LeastLatency: 0.0004,
		SoloRate: 1e9, BestRate: 8e8, Keep: 0.75, HeldSeconds: 12.34, LowestShare: 0.55, FloorSeconds: 2, Floor: 0.5, Samples: 80, OthersSeconds: 15,
		Windows: []copier.NeighbourWindow{{Bytes: 1 << 20, Seconds: 12.5}, {Bytes: 64 << 20, Seconds: 2.5}}, Restarts: 2}
	var w bytes.Buffer
	printSummary(&w, copier.Report{Bytes: 1 << 30, Seconds: 2, Engine: "io_uring", Neighbour: held}, "copied")
	if s := w.String(); !strings.Contains(s, "held back 12.3 s by others' I/O, down to 55% of its speed alone (its floor of 50% kept it moving 2.0 s)") {
		t.Errorf("summary %q", s)
	}
	for _, quiet := range []*copier.NeighbourReport{nil, {MaxBytes: 64 << 20, HeldSeconds: 0.5}} {
		w.Reset()
		printSummary(&w, copier.Report{Bytes: 1 << 30, Seconds: 2, Engine: "io_uring", Neighbour: quiet}, "copied")
		if strings.Contains(w.String(), "held back") {
			t.Errorf("summary %q for %+v", w.String(), quiet)
		}
	}
	b, err := json.Marshal(copier.Report{Neighbour: held})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"min_bytes_in_flight":1048576`, `"median_bytes_in_flight":8388608`, `"max_bytes_in_flight":67108864`,
		`"least_latency_microseconds":400`, `"held_milliseconds":12340`, `"others_milliseconds":15000`,
		`"best_rate":800000000`, `"keep":0.75`,
		`"windows":[{"bytes_in_flight":1048576,"milliseconds":12500},{"bytes_in_flight":67108864,"milliseconds":2500}]`, `"restarts":2`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	b, _ = json.Marshal(copier.Report{})
	if !bytes.Contains(b, []byte(`"neighbour":null`)) {
		t.Errorf("JSON without the good neighbour: %s", b)
	}
}
