package guard

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSpanOverlaps: ranges on one object, end -1 for to the end, empty
// ranges never.
func TestSpanOverlaps(t *testing.T) {
	a, b := Object{Dev: 1, Ino: 2}, Object{Block: true, Rdev: 3}
	cases := []struct {
		x, y Span
		want bool
	}{
		{Span{Obj: a, Off: 0, End: 10}, Span{Obj: a, Off: 9, End: 20}, true},
		{Span{Obj: a, Off: 0, End: 10}, Span{Obj: a, Off: 10, End: 20}, false},
		{Span{Obj: a, Off: 0, End: 10}, Span{Obj: b, Off: 0, End: 10}, false},
		{Span{Obj: a, Off: 100, End: -1}, Span{Obj: a, Off: 0, End: 101}, true},
		{Span{Obj: a, Off: 100, End: -1}, Span{Obj: a, Off: 0, End: 100}, false},
		{Span{Obj: a, Off: 0, End: -1}, Span{Obj: a, Off: 5, End: -1}, true},
		{Span{Obj: a, Off: 5, End: 5}, Span{Obj: a, Off: 0, End: -1}, false},
	}
	for _, c := range cases {
		if got := c.x.Overlaps(c.y); got != c.want || c.y.Overlaps(c.x) != c.want {
			t.Errorf("%+v and %+v: overlap %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

// TestFindOverlapThroughPartition: a partition's bytes are found on its
// disk, at its start, and the routes say how; a partition elsewhere on
// the disk does not meet them.
func TestFindOverlapThroughPartition(t *testing.T) {
	fakeSys(t) // vdx1 starts at sector 2048, vdx2 at 4096
	const start = 2048 * 512
	src := Span{Obj: blockObject(unix.Mkdev(7, 0)), Off: start + 100, End: start + 200, Label: "/dev/vdx"}
	dst := Span{Obj: blockObject(unix.Mkdev(259, 1)), Off: 0, End: 512, Label: "/dev/vdx1"}
	want := Overlap{On: "/dev/vdx", Src: "/dev/vdx bytes 1048676-1048776", Dst: "/dev/vdx1 -> /dev/vdx bytes 1048576-1049088"}
	if got := FindOverlap(src, dst); got == nil || *got != want {
		t.Errorf("FindOverlap = %+v, want %+v", got, want)
	}
	if got := FindOverlap(dst, src); got == nil || got.On != "/dev/vdx" {
		t.Errorf("the other way round: %+v, want an overlap on /dev/vdx", got)
	}
	dst.Obj = blockObject(unix.Mkdev(259, 2))
	if got := FindOverlap(src, dst); got != nil {
		t.Errorf("vdx2 meets SRC: %+v", got)
	}
	dst.End = -1 // vdx2 to its end: still past SRC
	if got := FindOverlap(src, dst); got != nil {
		t.Errorf("vdx2 to its end meets SRC: %+v", got)
	}
}

// TestThroughPartition: a write to a partition moves its counters and
// its disk's; a file's moves no block device's.
func TestThroughPartition(t *testing.T) {
	fakeSys(t)
	part := Span{Obj: blockObject(unix.Mkdev(259, 1)), End: -1}
	if got, want := Through(part), []uint64{unix.Mkdev(259, 1), unix.Mkdev(7, 0)}; !slices.Equal(got, want) {
		t.Errorf("Through(vdx1) = %v, want %v", got, want)
	}
	if got := Through(Span{Obj: Object{Dev: 1, Ino: 2}, End: -1}); got != nil {
		t.Errorf("Through(a file) = %v, want none", got)
	}
}
