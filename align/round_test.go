package align

import "testing"

func TestRound(t *testing.T) {
	tests := []struct {
		n, a, up, down int64
	}{
		{0, 512, 0, 0},
		{1, 512, 512, 0},
		{511, 512, 512, 0},
		{512, 512, 512, 512},
		{4097, 4096, 8192, 4096},
		{1<<20 + 3, 4096, 1<<20 + 4096, 1 << 20},
		// 196608 (192 KiB) is a 3-disk RAID stripe: not a power of two.
		{8 << 20, 196608, 43 * 196608, 42 * 196608},
		{196608, 196608, 196608, 196608},
		{5, 3, 6, 3},
		{7, 1, 7, 7},
	}
	for _, tt := range tests {
		if got := RoundUp(tt.n, tt.a); got != tt.up {
			t.Errorf("RoundUp(%d, %d) = %d, want %d", tt.n, tt.a, got, tt.up)
		}
		if got := RoundDown(tt.n, tt.a); got != tt.down {
			t.Errorf("RoundDown(%d, %d) = %d, want %d", tt.n, tt.a, got, tt.down)
		}
		if got, want := IsAligned(tt.n, tt.a), tt.up == tt.n; got != want {
			t.Errorf("IsAligned(%d, %d) = %t, want %t", tt.n, tt.a, got, want)
		}
	}
}

func TestRoundPanicsOnBadAlignment(t *testing.T) {
	for _, a := range []int64{0, -4096} {
		for name, f := range map[string]func(){
			"RoundUp":   func() { RoundUp(1, a) },
			"RoundDown": func() { RoundDown(1, a) },
			"IsAligned": func() { IsAligned(1, a) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s(1, %d) did not panic", name, a)
					}
				}()
				f()
			}()
		}
	}
}

func TestLCM(t *testing.T) {
	tests := []struct{ a, b, want int64 }{
		{512, 4096, 4096},
		{4096, 196608, 196608},
		{4096, 33553920, 268431360}, // the bogus USB-bridge optimal_io_size
		{3, 5, 15},
		{7, 7, 7},
	}
	for _, tt := range tests {
		if got := LCM(tt.a, tt.b); got != tt.want {
			t.Errorf("LCM(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSizeString(t *testing.T) {
	tests := map[int64]string{
		8 << 20:     "8 MiB",
		8454144:     "8256 KiB",
		1<<20 + 512: "1049088 bytes",
		512:         "512 bytes",
		0:           "0 bytes",
	}
	for n, want := range tests {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDirectAlign(t *testing.T) {
	tests := []struct {
		mem, off, want int
	}{
		{0, 0, 512},
		{4, 512, 512},
		{512, 4096, 4096},
		{4096, 512, 4096},
		{1, 1, 512},
	}
	for _, tt := range tests {
		g := Geometry{MemAlign: tt.mem, OffsetAlign: tt.off}
		if got := g.DirectAlign(); got != tt.want {
			t.Errorf("DirectAlign(mem %d, off %d) = %d, want %d", tt.mem, tt.off, got, tt.want)
		}
	}
}
