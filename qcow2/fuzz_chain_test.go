package qcow2

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// namedMem is a memFile under a name of its own (memFile's is fixed):
// files of a chain must not all look like one file.
type namedMem struct {
	*memFile
	name string
}

func (m namedMem) Name() string { return m.name }

// FuzzOpenChain: an image whose backing and data files are its own bytes
// again, under other names, in the format the image says (or probed),
// down to MaxDepth 4: the chain's code (probing, the guessed rule, reads
// and maps through layers of other sizes) never panics and never reads
// outside a file. Seeds: the real images of testdata/, and small ones
// made here (extended L2 at the smallest cluster QEMU allows, a header
// naming a backing file, one naming a data file).
func FuzzOpenChain(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.qcow2")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(tinyImage(14, incompatExtendedL2))
	f.Add(withBacking(tinyImage(9, 0), "b", "qcow2"))
	f.Add(withBacking(tinyImage(12, incompatDataFile), "d", ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		var files []*memFile
		opener := func(ref Ref) (Transport, Format, error) {
			m := &memFile{b: b}
			files = append(files, m)
			return namedMem{m, fmt.Sprintf("%s#%d", ref.Name, len(files))}, ref.Format, nil
		}
		top := &memFile{b: b}
		files = append(files, top)
		for _, guessed := range []bool{false, true} {
			im, err := Open(top, Options{Opener: opener, MaxDepth: 4, CacheBytes: 1 << 20, Guessed: guessed})
			if err == nil {
				readSome(im)
				im.Close()
			}
		}
		Inspect(top, InspectOptions{Options: Options{Opener: opener, MaxDepth: 4, CacheBytes: 1 << 20}})
		for _, m := range files {
			if bad := m.bad.Load(); bad != nil {
				t.Fatalf("read outside a file: %s", bad)
			}
		}
	})
}

// withBacking writes a backing file name (and a backing format
// extension, unless format is "") into a tinyImage's first cluster; with
// the data file feature, the name is the data file's.
func withBacking(b []byte, name string, format Format) []byte {
	be := binary.BigEndian
	off := headerV3Min
	if be.Uint64(b[72:])&incompatDataFile != 0 {
		be.PutUint32(b[off:], extDataFile)
		be.PutUint32(b[off+4:], uint32(len(name)))
		copy(b[off+8:], name)
		return b
	}
	if format != "" {
		be.PutUint32(b[off:], extBackingFormat)
		be.PutUint32(b[off+4:], uint32(len(format)))
		copy(b[off+8:], format)
		off += 16
	}
	off += 8 // the end of the extensions
	be.PutUint64(b[8:], uint64(off))
	be.PutUint32(b[16:], uint32(len(name)))
	copy(b[off:], name)
	return b
}
