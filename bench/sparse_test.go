package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSparseLayout(t *testing.T) {
	for _, size := range []int64{4 << 20, 256<<20 + 4321, 1 << 30, 16 << 30} {
		ends := map[bool]int{}
		for seed := uint64(1); seed <= 20; seed++ {
			l, err := newSparseLayout(size, seed)
			if err != nil {
				t.Fatalf("size %d seed %d: %v", size, seed, err)
			}
			again, _ := newSparseLayout(size, seed)
			if !reflect.DeepEqual(l, again) {
				t.Fatalf("size %d seed %d: two draws differ", size, seed)
			}
			checkLayout(t, l)
			ends[l.EndsData]++
		}
		if ends[true] == 0 || ends[false] == 0 {
			t.Errorf("size %d: 20 seeds never gave both ends (data %d, hole %d)", size, ends[true], ends[false])
		}
	}
	a, _ := newSparseLayout(1<<30, 1)
	b, _ := newSparseLayout(1<<30, 2)
	if reflect.DeepEqual(a.Data, b.Data) {
		t.Error("seeds 1 and 2 give the same layout")
	}
	if _, err := newSparseLayout(16<<10, 1); err == nil {
		t.Error("a 16 KiB image: want an error, the layout does not fit")
	}
}

// checkLayout asserts what the bench promises about a sparse image.
func checkLayout(t *testing.T, l sparseLayout) {
	t.Helper()
	all := slices.Concat(l.Data, l.Zeros)
	slices.SortFunc(all, func(a, b span) int { return int(a.Off - b.Off) })
	for i, s := range all {
		if s.Len <= 0 || s.Off < 0 || s.End() > l.Size {
			t.Fatalf("%s: span %+v outside [0, %d)", l, s, l.Size)
		}
		if i > 0 && s.Off < all[i-1].End() {
			t.Fatalf("%s: spans %+v and %+v overlap", l, all[i-1], s)
		}
	}
	for _, ss := range [][]span{l.Data, l.Zeros} {
		if !slices.IsSortedFunc(ss, func(a, b span) int { return int(a.Off - b.Off) }) {
			t.Fatalf("%s: spans not sorted", l)
		}
	}
	want := l.Size / sparseDataFrac
	if got := sumLen(l.Data); got < want || got >= want+4096 {
		t.Errorf("%s: %d bytes of data, want %d (+ less than a block)", l, got, want)
	}
	if len(l.Zeros) != sparseZeroRuns {
		t.Errorf("%s: %d zero runs, want %d", l, len(l.Zeros), sparseZeroRuns)
	}
	for _, z := range l.Zeros {
		if z.Off%4096 != 0 || z.Len%4096 != 0 {
			t.Errorf("%s: zero run %+v is off the 4 KiB grid", l, z)
		}
	}
	last := all[len(all)-1]
	switch {
	case l.EndsData && (last.End() != l.Size || slices.Contains(l.Zeros, last)):
		t.Errorf("%s: the last span %+v is not data ending at %d", l, last, l.Size)
	case !l.EndsData && last.End() > l.Size-l.Size/sparseTailHole:
		t.Errorf("%s: the last span %+v leaves no hole of 1/%d at the end", l, last, sparseTailHole)
	}
	if l.Size >= 256<<20 && l.Unaligned == 0 {
		t.Errorf("%s: no data extent has an edge off the 4 KiB grid", l)
	}
}

func TestSparseContent(t *testing.T) {
	l, err := newSparseLayout(8<<20+123, 5)
	if err != nil {
		t.Fatal(err)
	}
	c := sparseContent{data: l.Data, rnd: randomContent{seed: 5}}
	whole := make([]byte, l.Size)
	c.Fill(0, whole)
	rnd := make([]byte, l.Size)
	randomContent{seed: 5}.Fill(0, rnd)
	inData := make([]bool, l.Size)
	for _, s := range l.Data {
		for i := s.Off; i < s.End(); i++ {
			inData[i] = true
		}
	}
	for i := range whole {
		if inData[i] && whole[i] != rnd[i] || !inData[i] && whole[i] != 0 {
			t.Fatalf("byte %d is %#x; in data %v", i, whole[i], inData[i])
		}
	}
	// Any piece must be the same bytes as the whole, also across extents.
	for _, s := range l.Data[:3] {
		for _, cut := range [][2]int64{{s.Off - 1, s.End() + 1}, {s.Off + 1, s.Off + 2}, {max(s.Off-5000, 0), s.Off + 3}} {
			part := make([]byte, cut[1]-cut[0])
			c.Fill(cut[0], part)
			if !bytes.Equal(part, whole[cut[0]:cut[1]]) {
				t.Errorf("Fill(%d, %d bytes) differs from the whole", cut[0], len(part))
			}
		}
	}
}

func TestWriteSparse(t *testing.T) {
	l, err := newSparseLayout(16<<20+123, 9)
	if err != nil {
		t.Fatal(err)
	}
	c := sparseContent{data: l.Data, rnd: randomContent{seed: 9}}
	path := filepath.Join(t.TempDir(), "sparse.img")
	if err := writeSparse(path, l, c); err != nil {
		t.Fatal(err)
	}
	if err := verifyCopy(path, c, l.Size); err != nil {
		t.Fatalf("the image does not read back as its content: %v", err)
	}
	alloc, err := allocBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	written := sumLen(l.Data) + sumLen(l.Zeros)
	if alloc < written || alloc > l.Size/2 {
		t.Errorf("allocates %d bytes; want at least the %d written and far below the size %d", alloc, written, l.Size)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, z := range l.Zeros {
		// Written zeros are data to SEEK_DATA, not holes.
		if off, err := unix.Seek(int(f.Fd()), z.Off, unix.SEEK_DATA); err != nil || off != z.Off {
			t.Errorf("SEEK_DATA(%d) = %d, %v; want the written zero run there", z.Off, off, err)
		}
	}
}

func TestToolsForSparse(t *testing.T) {
	b := &bench{}
	for i := range tools {
		b.present = append(b.present, &tools[i])
	}
	names := func(w string) []string {
		wl, err := findWorkload(w)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, tool := range b.toolsFor(wl) {
			ns = append(ns, tool.Name)
		}
		return ns
	}
	sparse, _ := findWorkload("sparse")
	if got := names("sparse"); !slices.Equal(got, sparse.Tools) {
		t.Errorf("sparse runs %v, want %v", got, sparse.Tools)
	}
	for _, w := range []string{"file", "blockdev"} {
		got := names(w)
		for _, only := range []string{"ringcp-nosparse", "cp-sparse+sync"} {
			if slices.Contains(got, only) {
				t.Errorf("%s runs %s, a sparse-only tool", w, only)
			}
		}
		if !slices.Contains(got, "cp+sync") || !slices.Contains(got, "dd-1M") {
			t.Errorf("%s lost its tools: %v", w, got)
		}
	}
}

func TestParseRingcpSparse(t *testing.T) {
	const size = 1 << 30
	ok := `{"engine":"io_uring","bytes":1000,"bytes_read":5000,"bytes_holes":1073740824,"bytes_zeroed":0,"block_size":8388608}`
	r := &Run{Size: size}
	if err := parseRingcp([][]byte{[]byte("noise\n" + ok + "\n")}, r); err != nil {
		t.Fatalf("data + holes = size: %v", err)
	}
	if r.Ringcp == nil || r.Ringcp.BytesHoles != 1073740824 || r.Ringcp.Bytes != 1000 || r.Ringcp.BlockSize != 8<<20 {
		t.Fatalf("ringcp's report %+v lacks the accounting", r.Ringcp)
	}
	if s := ringcpChoice(r.Ringcp); !strings.Contains(s, "as holes") || !strings.Contains(s, "block size 8MiB") {
		t.Errorf("ringcpChoice does not say what became holes: %s", s)
	}
	short := `{"engine":"io_uring","bytes":1000,"bytes_holes":2000}`
	if err := parseRingcp([][]byte{[]byte(short)}, &Run{Size: size}); err == nil {
		t.Error("bytes that do not add up to the size: want an error")
	}
}

func TestReportMarksAllocation(t *testing.T) {
	src := int64(1 << 30)
	alloc := func(dst int64) details { return details{DstAlloc: dst, SrcAlloc: src} }
	runs := []*Run{
		{Workload: "sparse", Tool: "ringcp", Round: 1, Wall: 1e9, Size: 16 << 30, details: alloc(src - 4096)},
		{Workload: "sparse", Tool: "nbdcopy", Round: 1, Wall: 2e9, Size: 16 << 30, details: alloc(src + 4096)},
		{Workload: "sparse", Tool: "cp-sparse+sync", Round: 1, Wall: 1e8, Size: 16 << 30, details: alloc(src),
			Err: errors.Join(errWrong, errors.New("differs"))},
	}
	b := &bench{cfg: Config{Rounds: 1}, shapes: map[string]fioShape{},
		about: map[string]string{"sparse": "SRC is an image."}}
	wl, _ := findWorkload("sparse")
	var md bytes.Buffer
	b.writeWorkload(&md, wl, runs)
	out := md.String()
	if !strings.Contains(out, "DST alloc MiB | SRC alloc MiB |") || !strings.Contains(out, "SRC is an image.") {
		t.Fatalf("no allocation columns or no source paragraph:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "| ringcp "):
			if strings.Contains(line, "> SRC") || !strings.HasSuffix(line, "| 1024.0 |") {
				t.Errorf("ringcp's allocation is within SRC's: %s", line)
			}
		case strings.HasPrefix(line, "| nbdcopy "):
			if !strings.Contains(line, "**1024.0 > SRC**") {
				t.Errorf("nbdcopy's allocation is over SRC's and must be marked: %s", line)
			}
		case strings.HasPrefix(line, "| cp-sparse+sync "):
			if !strings.Contains(line, "WRONG") || strings.Contains(line, "1024.0") {
				t.Errorf("a wrong copy shows no numbers: %s", line)
			}
		}
	}
	if !strings.Contains(out, "- nbdcopy: DST allocates") {
		t.Errorf("no note on nbdcopy's allocation:\n%s", out)
	}
}
