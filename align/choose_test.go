package align

import (
	"strings"
	"testing"
)

// geo is a Geometry with the fields Choose reads.
func geo(mem, off, optimal int, size int64) Geometry {
	return Geometry{MemAlign: mem, OffsetAlign: off, OptimalIO: optimal, Size: size}
}

func TestChoose(t *testing.T) {
	const MiB = 1 << 20
	tests := []struct {
		name     string
		src, dst Geometry
		bs, qd   int // wanted
		wantBS   int
		wantQD   int
		wantWhy  string // a substring of some Why line
	}{
		{"512 both", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 0, 0, 8 * MiB, 8,
			"block size 8 MiB: default, a multiple of alignment 512 and optimal I/O 0"},
		{"4096 dst", geo(512, 512, 0, 0), geo(512, 4096, 0, 0), 0, 0, 8 * MiB, 8,
			"block size 8 MiB: default, a multiple of alignment 4096 and optimal I/O 0"},
		{"raid stripe", geo(512, 4096, 196608, 0), geo(512, 512, 0, 0), 0, 0, 43 * 196608, 8,
			"block size 8256 KiB: default 8 MiB rounded up to a multiple of alignment 4096 and optimal I/O 196608"},
		{"two stripes", geo(512, 512, 196608, 0), geo(512, 512, 1*MiB, 0), 0, 0, 9 * 1 * MiB, 8,
			"optimal I/O 3145728"},
		{"bogus optimal ignored", geo(512, 4096, 0, 0), geo(512, 512, 33553920, 0), 0, 0, 8 * MiB, 8,
			"optimal I/O 33553920 of dst ignored"},
		{"alignment forces over cap", geo(512, 128*MiB, 0, 0), geo(512, 512, 0, 0), 0, 0, 128 * MiB, 2,
			"over 64 MiB because the alignments force it"},
		{"user size kept", geo(512, 4096, 196608, 0), geo(512, 512, 0, 0), 1*MiB + 512, 0, 1*MiB + 512, 8,
			"block size 1049088 bytes: given (not a multiple of alignment 4096)"},
		{"user size aligned", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 32 * MiB, 0, 32 * MiB, 8,
			"block size 32 MiB: given"},
		{"user depth kept", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 0, 16, 8 * MiB, 16,
			"queue depth 16: given"},
		{"depth clamped by memory", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 64 * MiB, 16, 64 * MiB, 4,
			"queue depth 4: clamped so 4 x 64 MiB in flight stays within 256 MiB"},
		{"default depth clamped", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 48 * MiB, 0, 48 * MiB, 5,
			"queue depth 5: clamped"},
		{"huge block depth 1", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 512 * MiB, 0, 512 * MiB, 1,
			"queue depth 1: one block of 512 MiB is already over 256 MiB"},
		{"max depth", geo(512, 512, 0, 0), geo(512, 512, 0, 0), 4096, 5000, 4096, MaxQueueDepth,
			"queue depth 1024: given 5000 capped at the maximum"},
		{"small source", geo(512, 4096, 0, 100000), geo(512, 512, 0, 0), 0, 0, 102400, 1,
			"block size 100 KiB: the source is only 100000 bytes"},
		{"source of 3 blocks", geo(512, 512, 0, 20*MiB), geo(512, 512, 0, 0), 0, 0, 8 * MiB, 3,
			"queue depth 3: the source has only 3 blocks of 8 MiB"},
		{"zero fields", Geometry{}, Geometry{}, 0, 0, 8 * MiB, 8, "alignment 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Choose(tt.src, tt.dst, tt.bs, tt.qd)
			if c.BlockSize != tt.wantBS || c.QueueDepth != tt.wantQD {
				t.Errorf("Choose = bs %d qd %d, want bs %d qd %d\n%s",
					c.BlockSize, c.QueueDepth, tt.wantBS, tt.wantQD, strings.Join(c.Why, "\n"))
			}
			if !strings.Contains(strings.Join(c.Why, "\n"), tt.wantWhy) {
				t.Errorf("Why lacks %q:\n%s", tt.wantWhy, strings.Join(c.Why, "\n"))
			}
			checkChoiceInvariants(t, tt.src, tt.dst, tt.bs, c)
		})
	}
}

// checkChoiceInvariants checks what every Choice promises.
func checkChoiceInvariants(t *testing.T, src, dst Geometry, wantBS int, c Choice) {
	t.Helper()
	if c.QueueDepth < 1 || c.QueueDepth > MaxQueueDepth {
		t.Errorf("queue depth %d out of [1, %d]", c.QueueDepth, MaxQueueDepth)
	}
	if c.QueueDepth > 1 && c.QueueDepth*c.BlockSize > MaxInFlightBytes {
		t.Errorf("%d x %d bytes in flight, over %d", c.QueueDepth, c.BlockSize, MaxInFlightBytes)
	}
	if len(c.Why) < 3 {
		t.Errorf("Why has %d lines, want one per decision (alignment, block size, depth)", len(c.Why))
	}
	if wantBS > 0 {
		return // the caller's block size is kept, aligned or not
	}
	for _, g := range []Geometry{src, dst} {
		if !IsAligned(int64(c.BlockSize), int64(g.DirectAlign())) {
			t.Errorf("block size %d not a multiple of DirectAlign %d", c.BlockSize, g.DirectAlign())
		}
	}
}

// TestChooseDeterministic checks Choose is a pure function.
func TestChooseDeterministic(t *testing.T) {
	src, dst := geo(512, 4096, 196608, 0), geo(4096, 4096, 0, 0)
	a, b := Choose(src, dst, 0, 0), Choose(src, dst, 0, 0)
	if a.BlockSize != b.BlockSize || a.QueueDepth != b.QueueDepth ||
		strings.Join(a.Why, "|") != strings.Join(b.Why, "|") {
		t.Errorf("two calls differ: %+v vs %+v", a, b)
	}
}
