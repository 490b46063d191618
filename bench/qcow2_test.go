package main

import (
	"bytes"
	"compress/flate"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func secDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// TestImageContent: any piece is the same bytes as the whole, past the
// size is zeros, seeds differ, and the disk is neither random nor zeros:
// it compresses as a used filesystem does, with every kind present.
func TestImageContent(t *testing.T) {
	const size = 8<<20 + 4321
	c := imageContent{seed: 9, size: size}
	whole := make([]byte, size+5000)
	c.Fill(0, whole)
	for _, cut := range [][2]int{{0, 1}, {1, 7}, {imageRun - 3, imageRun + 5}, {imageRegion - 1, imageRegion + 2*imageRun + 1},
		{size - 10, size + 10}, {size - 1, size + 5000}, {12345, 3*imageRegion + 777}} {
		part := make([]byte, cut[1]-cut[0])
		c.Fill(int64(cut[0]), part)
		if !bytes.Equal(part, whole[cut[0]:cut[1]]) {
			t.Errorf("Fill(%d, %d bytes) differs from the whole", cut[0], len(part))
		}
	}
	if !isZeros(whole[size:]) {
		t.Error("bytes past the size are not zeros")
	}
	other := make([]byte, size)
	imageContent{seed: 10, size: size}.Fill(0, other)
	if bytes.Equal(other, whole[:size]) {
		t.Error("seeds 9 and 10 give the same disk")
	}
	kinds := map[runKind]int{}
	free := 0
	for r := int64(0); r < size/imageRegion; r++ {
		if c.free(r) {
			free++
			if !isZeros(whole[r*imageRegion : (r+1)*imageRegion]) {
				t.Fatalf("free region %d holds data", r)
			}
			continue
		}
		for i := r * imageRegion / imageRun; i < (r+1)*imageRegion/imageRun; i++ {
			kinds[c.kind(i)]++
		}
	}
	if free == 0 || free == int(size/imageRegion) {
		t.Errorf("%d of %d regions free: want some, not all", free, size/imageRegion)
	}
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, 1)
	fw.Write(whole[:size])
	fw.Close()
	ratio := float64(z.Len()) / float64(size)
	if ratio < 0.15 || ratio > 0.6 {
		t.Errorf("deflate -1 makes %.2f of the disk; want a used filesystem's 0.15 to 0.6", ratio)
	}
	if len(kinds) != 4 {
		t.Errorf("runs of %d kinds, want all of them", len(kinds))
	}
}

func isZeros(p []byte) bool { return !slices.ContainsFunc(p, func(b byte) bool { return b != 0 }) }

// TestChainContent: the writes are over the base, the zeroed runs over
// both, and the changes are drawn inside the disk on the guest's grid.
func TestChainContent(t *testing.T) {
	l, err := newSparseLayout(16<<20+4321, 3)
	if err != nil {
		t.Fatal(err)
	}
	base := sparseContent{data: l.Data, rnd: randomContent{seed: 3}}
	size := (l.Size + 511) / 512 * 512
	writes, zeros := drawChanges(size, l.Data, 3)
	if len(writes) != chainWrites || len(zeros) == 0 {
		t.Fatalf("%d writes, %d zeroed runs", len(writes), len(zeros))
	}
	for _, s := range slices.Concat(writes, zeros) {
		if s.Off < 0 || s.End() > size || s.Off%chainGrid != 0 || s.Len%chainGrid != 0 || s.Len <= 0 {
			t.Fatalf("change %+v is off the grid or outside %d bytes", s, size)
		}
	}
	c := chainContent{base: base, writes: writes, zeros: zeros, rnd: randomContent{seed: 4}}
	got, want, rnd := make([]byte, size), make([]byte, size), make([]byte, size)
	c.Fill(0, got)
	base.Fill(0, want)
	c.rnd.Fill(0, rnd)
	for _, s := range writes {
		copy(want[s.Off:s.End()], rnd[s.Off:s.End()])
	}
	for _, s := range zeros {
		clear(want[s.Off:s.End()])
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the chain's bytes are not the base, then the writes, then the zeroed runs")
	}
	part := make([]byte, 3*chainGrid+5)
	for _, s := range slices.Concat(writes[:3], zeros) {
		c.Fill(s.Off-7, part)
		if !bytes.Equal(part, got[s.Off-7:s.Off-7+int64(len(part))]) {
			t.Errorf("Fill at %d differs from the whole", s.Off-7)
		}
	}
}

// TestQemuImgPlanWritesQcow2: a qcow2 DST is made with -O qcow2, -c and
// the compression type when compressed, and never cut back by truncate.
func TestQemuImgPlanWritesQcow2(t *testing.T) {
	plain := Job{Pair: &Pair{Src: "s", Dst: "d.qcow2", Size: 1<<20 + 7, DstFormat: "qcow2"}}
	zstd := Job{Pair: &Pair{Src: "s", Dst: "d.qcow2", Size: 1<<20 + 7, DstFormat: "qcow2", DstCompress: "zstd"}}
	for _, j := range []Job{plain, zstd} {
		p := qemuImgPlan(j)
		line := planString(p)
		if len(p) != 1 || !strings.Contains(line, "-O qcow2") || strings.Contains(line, "truncate") {
			t.Errorf("%+v: %s", j.Pair, line)
		}
		if c := strings.Contains(line, "-c -o compression_type=zstd"); c != (j.DstCompress != "") {
			t.Errorf("%+v: compression in %s", j.Pair, line)
		}
	}
	nbd := planString(qemuNBDCopyPlan(Job{Pair: &Pair{SrcImage: "i.qcow2", SrcFormat: "qcow2", Dst: "d"}}))
	if !strings.Contains(nbd, "nbdcopy --flush -- [ qemu-nbd -r -f qcow2 --cache=none i.qcow2 ] d") {
		t.Errorf("qemu-nbd+nbdcopy: %s", nbd)
	}
}

// TestQcow2Targets: each workload is held to its target against each
// peer, and the image ratio is ringcp's largest over qemu-img's.
func TestQcow2Targets(t *testing.T) {
	run := func(w, tool string, round int, wall, cpu float64, image int64) *Run {
		return &Run{Workload: w, Tool: tool, Round: round, Wall: secDur(wall), User: secDur(cpu),
			details: details{DstSize: image}}
	}
	runs := []*Run{
		run("to-qcow2-zstd", "ringcp", 1, 1, 2, 90), run("to-qcow2-zstd", "qemu-img", 1, 2, 1, 100),
		run("to-qcow2-zstd", "ringcp", 2, 1, 2, 95), run("to-qcow2-zstd", "qemu-img", 2, 1.6, 1, 100),
		run("qcow2-native-dev", "ringcp", 1, 1, 1, 0), run("qcow2-native-dev", "qemu-img", 1, 1.2, 2, 0),
		run("qcow2-native-dev", "qemu-nbd+nbdcopy", 1, 0.9, 2, 0),
	}
	b := &bench{runs: runs}
	var md bytes.Buffer
	b.writeQcow2Targets(&md)
	out := md.String()
	for _, want := range []string{
		"| to-qcow2-zstd | qemu-img | 1.80 | 2.00 | 0.950 | speed ≥ 1.50, image ≤ 1.00 | yes |",
		"| qcow2-native-dev | qemu-img | 1.20 | 0.50 | – | speed ≥ 1.00 at CPU < 1.00 | yes |",
		"| qcow2-native-dev | qemu-nbd+nbdcopy | 0.90 | 0.50 | – | speed ≥ 1.00 at CPU < 1.00 | **no** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no row %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "qcow2-zlib") {
		t.Errorf("a workload that did not run has a row:\n%s", out)
	}
	if !math.IsNaN(ratioOr(0, 5)) {
		t.Error("a ratio of an unmeasured size is a number")
	}
}
