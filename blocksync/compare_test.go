package blocksync

import (
	"bytes"
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	const g = 512
	base := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i%251 + 1)
		}
		return b
	}
	for _, c := range []struct {
		name string
		n    int
		off  int64
		edit func(src, dst []byte) // makes SRC differ from DST
		want []Change
	}{
		{"equal", 4 * g, 0, func(src, dst []byte) {}, nil},
		{"empty", 0, 0, func(src, dst []byte) {}, nil},
		{"one byte", 4 * g, 1 << 20, func(src, dst []byte) { src[g+7]++ }, []Change{{1<<20 + g, g, false}}},
		{"first and last byte", 4 * g, 0, func(src, dst []byte) { src[0]++; src[4*g-1]++ }, []Change{{0, g, false}, {3 * g, g, false}}},
		{"neighbours merge", 4 * g, 0, func(src, dst []byte) { src[g-1]++; src[g]++ }, []Change{{0, 2 * g, false}}},
		{"short last granule", 3*g + 11, 0, func(src, dst []byte) { src[3*g+10]++ }, []Change{{3 * g, 11, false}}},
		{"data became zeros", 4 * g, 0, func(src, dst []byte) { clear(src[g : 3*g]) }, []Change{{g, 2 * g, true}}},
		{"zeros became data", 4 * g, 0, func(src, dst []byte) { clear(dst[g : 2*g]) }, []Change{{g, g, false}}},
		{"zero then data: two runs", 4 * g, 0, func(src, dst []byte) { clear(src[:g]); src[g]++ }, []Change{{0, g, true}, {g, g, false}}},
		{"partly zero is data", 2 * g, 0, func(src, dst []byte) { clear(src[:g-1]) }, []Change{{0, g, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst := base(c.n), base(c.n)
			c.edit(src, dst)
			got := Compare(c.off, src, dst, g, nil)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %+v want %+v", got, c.want)
			}
			// Applying the changes to DST makes it SRC.
			for _, ch := range got {
				rel := ch.Off - c.off
				copy(dst[rel:rel+ch.Len], src[rel:rel+ch.Len])
			}
			if !bytes.Equal(src, dst) {
				t.Fatal("the changes do not make DST equal to SRC")
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Fatal("windows of different lengths compared")
		}
	}()
	Compare(0, make([]byte, 10), make([]byte, 9), g, nil)
}

func TestCheckGranule(t *testing.T) {
	for _, g := range []int{512, 4096, 65536} {
		if err := CheckGranule(g); err != nil {
			t.Errorf("%d: %v", g, err)
		}
	}
	for _, g := range []int{0, 256, 511, 4095, 131072, -4096} {
		if err := CheckGranule(g); err == nil {
			t.Errorf("%d accepted", g)
		}
	}
}
