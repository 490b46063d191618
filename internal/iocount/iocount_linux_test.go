package iocount

import "testing"

func TestParseStat(t *testing.T) {
	// A loop device's stat line on Linux 6.x: 17 fields.
	c, err := parseStat("     120        0     9184       31       40        0     2048        5        0       64       37       3        0      128        1        4        2\n")
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counts{ReadBytes: 9184 * 512, WriteBytes: 2048 * 512, DiscardBytes: 128 * 512}) {
		t.Fatalf("got %+v", c)
	}
	// Before 4.18 there are 11 fields and no discards.
	c, err = parseStat("1 0 8 0 2 0 16 0 0 0 0")
	if err != nil || c != (Counts{ReadBytes: 8 * 512, WriteBytes: 16 * 512}) {
		t.Fatalf("11 fields: %+v, %v", c, err)
	}
	if _, err := parseStat("1 2 3"); err == nil {
		t.Fatal("3 fields accepted")
	}
	if got := (Counts{10, 20, 30}).Since(Counts{1, 2, 3}); got != (Counts{9, 18, 27}) {
		t.Fatalf("Since: %+v", got)
	}
}
