package copier

// The JSON of the reports: the objects the ringcp command prints with
// --json, less its envelope, so that a program importing copier and one
// reading the command see the same names, types and meanings. Bytes and
// milliseconds are integers; a rate is bytes per second, rounded: the
// range's bytes over the wall time under one name, the data's alone
// under another.

import (
	"encoding/json"
	"fmt"
	"math"
)

// Milliseconds is seconds as whole milliseconds, rounded.
func Milliseconds(seconds float64) int64 { return int64(math.Round(seconds * 1000)) }

// perSecond is bytes over seconds, rounded; 0 when no time passed.
func perSecond(bytes int64, seconds float64) int64 {
	if seconds <= 0 {
		return 0
	}
	return int64(math.Round(float64(bytes) / seconds))
}

// RangeDone is how much of the range the copy finished: data written,
// holes left and zeros made.
func (r *Report) RangeDone() int64 { return r.Bytes + r.BytesHoles + r.BytesZeroed }

// BytesPerSecond is the copy's rate: the range's bytes it finished over
// its wall time, rounded (what the summary line says).
func (r *Report) BytesPerSecond() int64 { return perSecond(r.RangeDone(), r.Seconds) }

// DataBytesPerSecond is the rate of the data written alone, holes and
// zeros left out.
func (r *Report) DataBytesPerSecond() int64 { return perSecond(r.Bytes, r.Seconds) }

// MarshalJSON adds the times as milliseconds and the two rates, and has
// io_limits as [] rather than null.
func (r Report) MarshalJSON() ([]byte, error) {
	type fields Report // the same fields without this method
	f := fields(r)
	if f.IOLimits == nil {
		f.IOLimits = []IOLimit{}
	}
	return json.Marshal(struct {
		fields
		Milliseconds       int64 `json:"milliseconds"`
		CPUMilliseconds    int64 `json:"cpu_milliseconds"`
		BytesPerSecond     int64 `json:"bytes_per_second"`
		DataBytesPerSecond int64 `json:"data_bytes_per_second"`
	}{f, Milliseconds(r.Seconds), Milliseconds(r.CPUSeconds), r.BytesPerSecond(), r.DataBytesPerSecond()})
}

// MarshalJSON: the read-back's result as a word, its time in ms.
func (v VerifyReport) MarshalJSON() ([]byte, error) {
	result := "ok"
	if v.BadBlocks > 0 {
		result = "mismatch"
	}
	return json.Marshal(struct {
		Result         string `json:"result"` // "ok" or "mismatch"
		Bytes          int64  `json:"bytes"`
		Milliseconds   int64  `json:"milliseconds"`
		BlockSize      int    `json:"block_size"` // the blocks bad_blocks counts
		BadBlocks      int64  `json:"bad_blocks"`
		FirstBadOffset int64  `json:"first_bad_offset"` // in DST; -1 when none differs
		Read           string `json:"read"`             // how DST was read back
		// SrcZerosRead: bytes of an NBD SRC that its block status called
		// zeros, read from SRC after the copy to check them.
		SrcZerosRead int64 `json:"src_zeros_read"`
	}{result, v.Bytes, Milliseconds(v.Seconds), CellSize, v.BadBlocks, v.FirstBad, v.How, v.SrcZerosRead})
}

// MarshalJSON: times in ms, the probes' latencies in µs.
func (y YieldReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Cuts            int     `json:"cuts"`
		Raises          int     `json:"raises"`
		Futile          int     `json:"futile"`
		CutMilliseconds int64   `json:"cut_milliseconds"`
		LowestDepth     int     `json:"lowest_depth"`
		LowestRate      int64   `json:"lowest_rate"`
		ProbeBase       int64   `json:"probe_base_microseconds"`
		ProbeMax        int64   `json:"probe_max_microseconds"`
		OthersMax       float64 `json:"others_max_iops"`
		PSISomeMax      float64 `json:"psi_some_max"` // a share of time, 0 to 1; -1 without PSI
		PSIFullMax      float64 `json:"psi_full_max"`
	}{y.Cuts, y.Raises, y.Futile, Milliseconds(y.CutSeconds), y.LowestDepth, y.LowestRate,
		int64(math.Round(y.ProbeBase * 1e6)), int64(math.Round(y.ProbeMax * 1e6)),
		math.Round(y.OthersMax), round3(y.PSISomeMax), round3(y.PSIFullMax)})
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// MarshalJSON: as a Report's, for what Compare or Checksum read.
func (r ReadReport) MarshalJSON() ([]byte, error) {
	type fields ReadReport
	f := fields(r)
	if f.IOLimits == nil {
		f.IOLimits = []IOLimit{}
	}
	return json.Marshal(struct {
		fields
		Milliseconds   int64 `json:"milliseconds"`
		BytesPerSecond int64 `json:"bytes_per_second"`
	}{f, Milliseconds(r.Seconds), perSecond(r.Bytes, r.Seconds)})
}

// MarshalText names the state (String), so that JSON has a word.
func (s DstState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a word MarshalText wrote.
func (s *DstState) UnmarshalText(b []byte) error {
	for st := DstUntouched; st <= DstMixed; st++ {
		if st.String() == string(b) {
			*s = st
			return nil
		}
	}
	return fmt.Errorf("copier: unknown DST state %q", b)
}
