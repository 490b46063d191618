package engine

import (
	"testing"
	"time"
)

// TestNeighbourGrowthStall: a copy never alone (the foreground was there
// before it, as in the busy bench) whose one judgement at its second
// window is a stall (this VM's disk stalls for 100-300 ms every second
// or so: judgements of 4 to 90 MB/s between ones of 300 to 500): the
// growth does not end on it. It settles, as without the stall, on about
// the least window that moves its share of what it moves beside others,
// and holds it. Before, the stall ended the growth after one doubling:
// the best beside others was what 128 KiB moved, the aim 3/4 of that,
// which 128 KiB moved, and it held 128 KiB (a copy beside fio on vda
// held it 3.5 s of 6.6, at half the speed of 384 KiB).
func TestNeighbourGrowthStall(t *testing.T) {
	d := vdaLike()
	n := NewNeighbour(8, 8<<20, 4096)
	sig := Signals{Others: true}
	n.Hear(sig)
	second := n.bytesAt(n.levelOf(2 * n.bytesAt(0))) // the first doubling
	stalled := 0                                     // samples stalled: the change's, and the 50 ms of one judgement
	for range samplesIn(settleTime) {
		s := d.sample(n.Bytes())
		if n.Bytes() == second && stalled < 3 {
			s.Bytes /= 5
			stalled++
		}
		n.Step(s, sig)
	}
	if stalled == 0 {
		t.Fatalf("the growth never reached its second window, %d bytes", second)
	}
	best := d.thr(8 * (8 << 20))
	want := n.bytesAt(leastLevel(n, d, NeighbourKeep*best))
	if w := steps(n, d, sig, samplesIn(5*time.Second)); w < want/2 || w > 2*want {
		t.Errorf("after a stall: mean window %d bytes (%.0f B/s), want about %d (the least that moves %.2f of the %.0f B/s it moves beside others)",
			w, d.thr(w), want, NeighbourKeep, best)
	}
}
