package sysblock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       Stat
		bad        bool
	}{
		{name: "before 4.18, 11 fields", line: "1 2 8 4 5 6 16 8 0 10 11\n",
			want: Stat{ReadIOs: 1, ReadMerges: 2, ReadSectors: 8, ReadTicks: 4, WriteIOs: 5, WriteMerges: 6, WriteSectors: 16, WriteTicks: 8, IOTicks: 10, TimeInQueue: 11}},
		{name: "4.18, 15 fields", line: "1 0 8 0 2 0 16 0 0 0 0 3 0 24 1",
			want: Stat{ReadIOs: 1, ReadSectors: 8, WriteIOs: 2, WriteSectors: 16, DiscardIOs: 3, DiscardSectors: 24, DiscardTicks: 1}},
		{name: "5.5+, 17 fields, sysfs's padding", line: "     120        0     9184       31       40        0     2048        5        0       64       37       3        0      128        1        4        2\n",
			want: Stat{ReadIOs: 120, ReadSectors: 9184, ReadTicks: 31, WriteIOs: 40, WriteSectors: 2048, WriteTicks: 5, IOTicks: 64, TimeInQueue: 37,
				DiscardIOs: 3, DiscardSectors: 128, DiscardTicks: 1, FlushIOs: 4, FlushTicks: 2}},
		{name: "a later kernel's extra field", line: "1 0 8 0 2 0 16 0 0 0 0 3 0 24 1 4 2 99",
			want: Stat{ReadIOs: 1, ReadSectors: 8, WriteIOs: 2, WriteSectors: 16, DiscardIOs: 3, DiscardSectors: 24, DiscardTicks: 1, FlushIOs: 4, FlushTicks: 2}},
		{name: "empty", line: "", bad: true},
		{name: "short", line: "1 2 3", bad: true},
		{name: "12 fields", line: "1 0 8 0 2 0 16 0 0 0 0 3", bad: true},
		{name: "16 fields", line: "1 0 8 0 2 0 16 0 0 0 0 3 0 24 1 4", bad: true},
		{name: "not a number", line: "1 0 x 0 2 0 16 0 0 0 0", bad: true},
		{name: "negative", line: "1 0 -8 0 2 0 16 0 0 0 0", bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseStat(c.line)
			if c.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestReadStatNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	if _, err := ReadStat(path); err == nil {
		t.Fatal("a missing file read")
	}
	if err := os.WriteFile(path, []byte("1 2 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStat(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v; want it to name %s", err, path)
	}
}
