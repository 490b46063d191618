package copier

import "testing"

// TestYieldDiskOthers: the disk counts each request as it completes, the
// copy a chunk when it completes, so a chunk's requests may be on the
// disk ticks before the copy counts them. Those are the copy's own, up
// to its requests in flight; requests beyond what its counters explain
// and what it has in flight are others'.
func TestYieldDiskOthers(t *testing.T) {
	type tick struct{ reqs, mine, want int64 }
	const inFlight = 64
	cases := []struct {
		name  string
		ticks []tick
	}{
		{"the copy's chunks counted a tick late", []tick{{30, 0, 0}, {60, 30, 0}, {90, 30, 0}, {120, 30, 0}}},
		{"chunks counted several ticks late", []tick{{20, 0, 0}, {40, 0, 0}, {60, 0, 0}, {124, 64, 0}}},
		{"a foreground beside an exact copy", []tick{{50, 30, 0}, {100, 30, 0}, {150, 30, 0}, {200, 30, 16}, {250, 30, 20}}},
		{"a foreground beside a copy a tick late", []tick{{100, 0, 36}, {200, 80, 20}, {300, 80, 20}}},
		{"a surplus pays what is owed, no more", []tick{{60, 0, 0}, {70, 100, 0}, {170, 0, 36}}},
		{"an unreadable stat file forgets what was owed", []tick{{60, 0, 0}, {-1, 0, 0}, {130, 0, 0}, {200, 0, 6}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &yieldDisk{}
			for i, k := range c.ticks {
				if got := d.others(k.reqs, k.mine, inFlight); got != k.want {
					t.Fatalf("tick %d (disk %d requests, the copy's %d): others %d, want %d", i, k.reqs, k.mine, got, k.want)
				}
			}
		})
	}
}
