package copier

import (
	"encoding/json"
	"testing"
)

// TestReportJSON: a Report marshals as the ringcp command's object does:
// DstState as a word (it was 1), times as integer milliseconds, the two
// rates, io_limits [] rather than null, and no engine type.
func TestReportJSON(t *testing.T) {
	r := Report{Src: "a", Dst: "b", Length: 3 << 20, Bytes: 1 << 20, BytesHoles: 2 << 20, Seconds: 0.5,
		CPUSeconds: 0.0125, DstState: DstComplete, Verify: &VerifyReport{Bytes: 3 << 20, Seconds: 0.25, FirstBad: -1}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"dst_state": "complete", "milliseconds": float64(500), "cpu_milliseconds": float64(13),
		"bytes_per_second": float64(6 << 20), "data_bytes_per_second": float64(2 << 20), "length": float64(3 << 20)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if l, ok := got["io_limits"].([]any); !ok || len(l) != 0 {
		t.Errorf("io_limits = %v, want []", got["io_limits"])
	}
	v, _ := got["verify"].(map[string]any)
	if v["result"] != "ok" || v["milliseconds"] != float64(250) || v["block_size"] != float64(CellSize) {
		t.Errorf("verify = %v", v)
	}
	for _, k := range []string{"Seconds", "seconds", "Caps", "notes", "Notes"} {
		if _, has := got[k]; has {
			t.Errorf("%s is in the JSON", k)
		}
	}
	for k, v := range got {
		if f, ok := v.(float64); ok && f != float64(int64(f)) {
			t.Errorf("%s = %v: not an integer", k, v)
		}
	}
}

// TestDstStateText: every state is a word that reads back as itself.
func TestDstStateText(t *testing.T) {
	for s := DstUntouched; s <= DstMixed; s++ {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back DstState
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%d -> %q -> %d, %v", s, b, back, err)
		}
	}
	var s DstState
	if err := s.UnmarshalText([]byte("1")); err == nil {
		t.Error("\"1\" read as a state")
	}
}
