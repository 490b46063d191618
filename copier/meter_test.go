package copier

import (
	"math"
	"testing"
	"time"
)

// TestMeterRateFromTheFirstSecond: the live rate is the copy's rate from
// its first samples: the time before the first byte (opening, mapping) is
// no rate, and the average is not pulled towards 0 for seconds; a resumed
// copy's earlier part is no rate of this run; later it still follows a
// change of speed within a few seconds.
func TestMeterRateFromTheFirstSecond(t *testing.T) {
	const rate = 100e6 // bytes per second
	t0 := time.Unix(1000, 0)
	for _, before := range []int64{0, 5 << 30} {
		m := &meter{start: t0, last: t0}
		m.doneBefore(before)
		at := func(d time.Duration) time.Time { return t0.Add(d) }
		m.sample(at(250*time.Millisecond), before) // opening the ends
		m.sample(at(500*time.Millisecond), before)
		var got float64
		for d := 750 * time.Millisecond; d <= 1500*time.Millisecond; d += 250 * time.Millisecond {
			got = m.sample(at(d), before+int64((d-500*time.Millisecond).Seconds()*rate))
			if math.Abs(got-rate)/rate > 0.01 {
				t.Errorf("before %d, at %v: %.0f B/s, want %.0f", before, d, got, float64(rate))
			}
		}
		done := before + int64(rate)
		for d := 1750 * time.Millisecond; d <= 15*time.Second; d += 250 * time.Millisecond {
			done += int64(rate / 2 / 4) // half the speed
			got = m.sample(at(d), done)
		}
		if math.Abs(got-rate/2)/(rate/2) > 0.02 {
			t.Errorf("before %d: after a slowdown to half: %.0f B/s", before, got)
		}
	}
}
