package engine

import (
	"testing"
	"time"
)

// observed keeps the samples a budget's controller heard.
type observed []Sample

func (o *observed) Observe(s Sample) { *o = append(*o, s) }

// TestPacedPerBudget: a budget's Sample.Paced is the time its copies
// waited on the rate caps as a share of the sample, the mean of what each
// copy that reported waited: four jobs of a batch that each waited 200 ms
// of a 250 ms sample waited 200 ms, not 800 (summed, a judgement counted
// four times its length as paced); one of four that waited 200 ms while
// the others moved is 50 ms, not the cap's half of the time.
func TestPacedPerBudget(t *testing.T) {
	cases := []struct {
		name   string
		paced  []time.Duration
		want   time.Duration
		capped bool // at least neighbourPaced of the sample
	}{
		{"all four waited", []time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}, 200 * time.Millisecond, true},
		{"one of four waited", []time.Duration{200 * time.Millisecond, 0, 0, 0}, 50 * time.Millisecond, false},
		{"a copy alone", []time.Duration{200 * time.Millisecond}, 200 * time.Millisecond, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := testBudget(len(c.paced))
			var got observed
			b.SetController(&got)
			members := make([]*member, len(c.paced))
			t0 := time.Now()
			for i, p := range c.paced {
				members[i] = b.join()
				members[i].report(&meter{requests: 1, paced: p}, t0.Add(time.Duration(i)*time.Millisecond))
			}
			// The first copy reports again when the sample is due,
			// having waited no more: it is counted once.
			members[0].report(&meter{requests: 1}, t0.Add(SampleEvery))
			if len(got) != 1 {
				t.Fatalf("%d samples; want 1", len(got))
			}
			s := got[0]
			if s.Paced != c.want || s.Paced > s.Elapsed {
				t.Errorf("Paced %v of a sample of %v; want %v", s.Paced, s.Elapsed, c.want)
			}
			if capped := s.Paced.Seconds() >= neighbourPaced*s.Elapsed.Seconds(); capped != c.capped {
				t.Errorf("Paced %v of %v counts as the cap's: %v; want %v", s.Paced, s.Elapsed, capped, c.capped)
			}
			for _, m := range members {
				m.want(false)
				if err := m.leave(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
