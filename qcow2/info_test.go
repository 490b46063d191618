package qcow2

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// qemuInfo is what qemu-img info --output=json says that Info says too.
type qemuInfo struct {
	Filename              string
	Format                string
	VirtualSize           int64  `json:"virtual-size"`
	ActualSize            int64  `json:"actual-size"`
	ClusterSize           int64  `json:"cluster-size"`
	DirtyFlag             bool   `json:"dirty-flag"`
	BackingFilename       string `json:"backing-filename"`
	BackingFilenameFormat string `json:"backing-filename-format"`
	FormatSpecific        struct {
		Data struct {
			Compat          string
			CompressionType string `json:"compression-type"`
			LazyRefcounts   bool   `json:"lazy-refcounts"`
			RefcountBits    int    `json:"refcount-bits"`
			Corrupt         bool
			ExtendedL2      bool   `json:"extended-l2"`
			DataFile        string `json:"data-file"`
			DataFileRaw     bool   `json:"data-file-raw"`
		}
	} `json:"format-specific"`
}

// TestInspect: Inspect says what qemu-img info --backing-chain says, for
// every file of every shape's chain.
func TestInspect(t *testing.T) {
	needQemu(t)
	for _, s := range readShapes() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			img := s.make(t, t.TempDir())
			var chain []qemuInfo
			if err := json.Unmarshal(qemuImg(t, "info", "--backing-chain", "--output=json", "-U", img), &chain); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := Inspect(f, InspectOptions{Options: Options{Opener: FileOpener},
				InUse: func(Transport) (bool, error) { return false, nil }})
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range chain {
				if info == nil {
					t.Fatalf("file %d of the chain (%s) missing", i, q.Filename)
				}
				compareInfo(t, info, q)
				info = info.Backing
			}
			if info != nil {
				t.Errorf("Inspect gives a longer chain than qemu-img: %+v", info)
			}
		})
	}
}

func compareInfo(t *testing.T, got *Info, q qemuInfo) {
	t.Helper()
	d := q.FormatSpecific.Data
	want := Info{Name: got.Name, Format: Format(q.Format), VirtualSize: q.VirtualSize, FileSize: got.FileSize,
		DiskSize: q.ActualSize, ClusterSize: q.ClusterSize, Version: got.Version, Compat: d.Compat,
		CompressionType: d.CompressionType, ExtendedL2: d.ExtendedL2, LazyRefcounts: d.LazyRefcounts,
		RefcountBits: d.RefcountBits, Dirty: q.DirtyFlag, Corrupt: d.Corrupt, DataFile: d.DataFile,
		DataFileRaw: d.DataFileRaw, BackingFile: q.BackingFilename, BackingFormat: Format(q.BackingFilenameFormat),
		DataBytes: got.DataBytes, CompressedBytes: got.CompressedBytes, InUse: got.InUse,
		Backing: got.Backing, BackingError: got.BackingError}
	g := *got
	if g != want {
		t.Errorf("%s:\nInspect  %+v\nqemu-img %+v", q.Filename, g, want)
	}
	if got.InUse == nil || *got.InUse {
		t.Errorf("%s: the InUse hook's answer is not in Info: %v", q.Filename, got.InUse)
	}
	if got.Format == FormatQcow2 && got.DataBytes < 0 {
		t.Errorf("%s: data not counted", q.Filename)
	}
}

// TestInspectFlags: a dirty, corrupt-marked or encrypted image is
// described (Open refuses it).
func TestInspectFlags(t *testing.T) {
	needQemu(t)
	path, b := damagedBase(t)
	be.PutUint64(b[72:], be.Uint64(b[72:])|incompatDirty|incompatCorrupt)
	be.PutUint32(b[32:], 2)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := Inspect(f, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Dirty || !info.Corrupt || info.Encrypted != "luks" || info.VirtualSize != 4<<20 || info.DataBytes != -1 {
		t.Errorf("Inspect: %+v", info)
	}
}

// TestMeasure: Measure says what qemu-img measure -O qcow2 says, or
// less where the image's data clusters hold holes of the host file
// (zeros QEMU's convert and write skipped: it counts them as data, this
// package as zeros), and an image the Writer makes takes no more than
// Required.
func TestMeasure(t *testing.T) {
	needQemu(t)
	for _, s := range readShapes() {
		if s.name == "chain3/qcow2" || s.name == "chain3/raw" {
			continue // qemu-img measure counts a chain's data as its own; so does Measure, but images differ by the base
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			img := s.make(t, dir)
			im := openPath(t, img, Options{})
			raw := rawOf(t, img)
			for _, cs := range []int64{512, 64 << 10, 2 << 20} {
				var q struct {
					Required       int64
					FullyAllocated int64 `json:"fully-allocated"`
				}
				out := qemuImg(t, "measure", "--output=json", "-O", "qcow2", "-o", fmt.Sprintf("cluster_size=%d", cs), img)
				if err := json.Unmarshal(out, &q); err != nil {
					t.Fatal(err)
				}
				m, err := Measure(im, cs)
				if err != nil {
					t.Fatal(err)
				}
				if m.Required > q.Required || m.FullyAllocated != q.FullyAllocated {
					t.Errorf("cluster size %d: Measure %+v, qemu-img measure %+v", cs, m, q)
				}
				out2 := filepath.Join(dir, "new.qcow2")
				writeImage(t, out2, raw, WriterOptions{ClusterSize: cs})
				if size := fileSize(t, out2); size > m.Required {
					t.Errorf("cluster size %d: the Writer's image takes %d bytes, more than Required %d", cs, size, m.Required)
				}
			}
		})
	}
}
