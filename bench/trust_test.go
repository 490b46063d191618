package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestTrustParse: the verify row keeps the verify pass's time and refuses
// a report without a passed verification; the resume row refuses a run
// that resumed from a leftover state; the read row scales fio's time to
// the copy.
func TestTrustParse(t *testing.T) {
	const size = 8 << 20
	ok := `{"engine":"io_uring","bytes":8388608,"verify":{"result":"ok","bytes":8388608,"milliseconds":500}}`
	r := &Run{Size: size}
	if err := parseVerify([][]byte{[]byte("noise\n" + ok + "\n")}, r); err != nil || r.Trust.VerifySeconds != 0.5 {
		t.Errorf("parseVerify: %v, %+v", err, r.Trust)
	}
	bad := strings.Replace(ok, `"ok"`, `"mismatch"`, 1)
	if err := parseVerify([][]byte{[]byte(bad)}, &Run{Size: size}); err == nil {
		t.Error("parseVerify accepted a mismatch")
	}
	if err := parseResume([][]byte{[]byte(`{"bytes":8388608,"resumed":4194304}`)}, &Run{Size: size}); err == nil {
		t.Error("parseResume accepted a resumed run")
	}
	fio := `{"jobs":[{"jobname":"read","job_runtime":250,"read":{"io_bytes":4194304}}]}`
	r = &Run{Size: size}
	if err := parseCopyRead([][]byte{[]byte(ok), []byte(fio)}, r); err != nil || r.Trust.ReadSeconds != 0.5 {
		t.Errorf("parseCopyRead: %v, %+v", err, r.Trust)
	}
}

// TestTrustTable: same-round ratios, medians over rounds.
func TestTrustTable(t *testing.T) {
	var runs []*Run
	for round := 1; round <= 3; round++ {
		s := time.Duration(round) * time.Second
		runs = append(runs,
			&Run{Tool: "ringcp", Round: round, Wall: s},
			&Run{Tool: "ringcp-verify", Round: round, Wall: s * 3 / 2, details: details{Trust: &trustDetail{VerifySeconds: 0.4 * float64(round)}}},
			&Run{Tool: "ringcp+read", Round: round, Wall: 9 * s, details: details{Trust: &trustDetail{ReadSeconds: 0.5 * float64(round)}}},
			&Run{Tool: "ringcp-resume", Round: round, Wall: s * 11 / 10})
	}
	var b bytes.Buffer
	writeTrustTable(&b, runs)
	if !strings.Contains(b.String(), "| 0.80 | 1.00 | 0.80 | 1.50 | 1.10 |") {
		t.Errorf("table:\n%s", b.String())
	}
}
