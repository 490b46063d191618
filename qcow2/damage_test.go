package qcow2

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// damagedBase is a real image to damage: 64 KiB clusters, 4 MiB, data
// in the first and third MiB, a zero cluster.
func damagedBase(t *testing.T) (path string, b []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "img.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", path, "4M")
	qemuIO(t, "qcow2", path, "write -P 0x5a 0 1M", "write -P 0x5b 2M 1M", "write -z 3M 64k")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

var be = binary.BigEndian

// firstL2 is the host offset of the first L2 table and of its first
// data entry.
func firstL2(b []byte) (l2, entry int64) {
	l1 := int64(be.Uint64(b[40:]))
	l2 = int64(be.Uint64(b[l1:]) & entryOffsetMask)
	return l2, l2
}

// TestDamages: bytes changed in a real image, each refused by Open with
// the right cause (and none of them panics when read lazily).
func TestDamages(t *testing.T) {
	needQemu(t)
	cases := []struct {
		name   string
		damage func(b []byte) []byte
		cause  error
	}{
		{"L1 offset past EOF", func(b []byte) []byte {
			be.PutUint64(b[40:], uint64(len(b))+1<<16)
			return b
		}, ErrMalformed},
		{"L1 offset unaligned", func(b []byte) []byte {
			be.PutUint64(b[40:], be.Uint64(b[40:])+8)
			return b
		}, ErrMalformed},
		{"L2 table past EOF", func(b []byte) []byte {
			l1 := be.Uint64(b[40:])
			be.PutUint64(b[l1:], uint64(len(b)+1<<16)|entryCopied)
			return b
		}, ErrMalformed},
		{"L2 entry past EOF", func(b []byte) []byte {
			_, e := firstL2(b)
			be.PutUint64(b[e:], 1<<40|entryCopied)
			return b
		}, ErrMalformed},
		{"L2 entry unaligned", func(b []byte) []byte {
			_, e := firstL2(b)
			be.PutUint64(b[e:], be.Uint64(b[e:])+512)
			return b
		}, ErrMalformed},
		{"data over the L1 table", func(b []byte) []byte {
			_, e := firstL2(b)
			be.PutUint64(b[e:], be.Uint64(b[40:])|entryCopied)
			return b
		}, ErrMalformed},
		{"compressed cluster past EOF", func(b []byte) []byte {
			_, e := firstL2(b)
			be.PutUint64(b[e:], entryCompressed|uint64(len(b)+4096))
			return b
		}, ErrMalformed},
		{"L2 table over the refcount table", func(b []byte) []byte {
			l1 := be.Uint64(b[40:])
			be.PutUint64(b[l1:], be.Uint64(b[48:])|entryCopied)
			return b
		}, ErrMalformed},
		{"two L1 entries, one L2 table", func(b []byte) []byte {
			// Grow the size so that a second L1 entry maps guest bytes.
			be.PutUint64(b[24:], 1<<30)
			be.PutUint32(b[36:], 2)
			l1 := be.Uint64(b[40:])
			copy(b[l1+8:], b[l1:l1+8])
			return b
		}, ErrMalformed},
		{"huge l1_size", func(b []byte) []byte {
			be.PutUint32(b[36:], 0xffffffff)
			return b
		}, ErrMalformed},
		{"l1_size too small for the size", func(b []byte) []byte {
			be.PutUint64(b[24:], 1<<40)
			return b
		}, ErrMalformed},
		{"refcount table outside the file", func(b []byte) []byte {
			be.PutUint64(b[48:], 1<<40)
			return b
		}, ErrMalformed},
		{"refcount block outside the file", func(b []byte) []byte {
			rt := be.Uint64(b[48:])
			be.PutUint64(b[rt:], 1<<40)
			return b
		}, ErrMalformed},
		{"refcount table too large", func(b []byte) []byte {
			be.PutUint32(b[56:], 1<<20)
			return b
		}, ErrMalformed},
		{"unknown incompatible bit", func(b []byte) []byte {
			be.PutUint64(b[72:], be.Uint64(b[72:])|1<<20)
			return b
		}, ErrUnsupported},
		{"AES encryption", func(b []byte) []byte {
			be.PutUint32(b[32:], 1)
			return b
		}, ErrEncrypted},
		{"LUKS encryption", func(b []byte) []byte {
			be.PutUint32(b[32:], 2)
			return b
		}, ErrEncrypted},
		{"dirty bit", func(b []byte) []byte {
			be.PutUint64(b[72:], be.Uint64(b[72:])|incompatDirty)
			return b
		}, ErrDirty},
		{"corrupt bit", func(b []byte) []byte {
			be.PutUint64(b[72:], be.Uint64(b[72:])|incompatCorrupt)
			return b
		}, ErrCorruptBit},
		{"version 4", func(b []byte) []byte {
			be.PutUint32(b[4:], 4)
			return b
		}, ErrUnsupported},
		{"cluster_bits 30", func(b []byte) []byte {
			be.PutUint32(b[20:], 30)
			return b
		}, ErrMalformed},
		{"header extension past the cluster", func(b []byte) []byte {
			hl := be.Uint32(b[100:])
			be.PutUint32(b[hl:], 0x12345678)
			be.PutUint32(b[hl+4:], 1<<20)
			return b
		}, ErrMalformed},
		{"backing name outside the first cluster", func(b []byte) []byte {
			be.PutUint64(b[8:], 65530)
			be.PutUint32(b[16:], 100)
			return b
		}, ErrMalformed},
		{"invalid zstd compression type", func(b []byte) []byte {
			b[104] = 7
			be.PutUint64(b[72:], be.Uint64(b[72:])|incompatCompression)
			return b
		}, ErrUnsupported},
		{"cut short", func(b []byte) []byte { return b[:50] }, ErrMalformed},
		{"not qcow2", func(b []byte) []byte { b[0] = 'X'; return b }, ErrNotQcow2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, b := damagedBase(t)
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = Open(f, Options{Opener: FileOpener})
			if !isCause(err, c.cause) {
				t.Fatalf("Open: %v; want a refusal for %v", err, c.cause)
			}
			t.Logf("refused: %v", err)
			// Lazily, the same image must fail cleanly or read; tables
			// shared by L1 entries are refused lazily too.
			im, err := Open(f, Options{Opener: FileOpener, Lazy: true})
			if c.name == "two L1 entries, one L2 table" && !isCause(err, ErrMalformed) {
				t.Errorf("lazy Open: %v; want a refusal", err)
			}
			if err == nil {
				readAll(im)
				im.Close()
			}
		})
	}
}

// readAll reads and maps every byte of an image, ignoring errors: for
// images that must not crash the reader.
func readAll(im *Image) {
	p := make([]byte, 1<<20)
	for off := int64(0); off < im.Size() && off < 64<<20; off += int64(len(p)) {
		im.ReadAt(p, off)
	}
	im.Map(0, min(im.Size(), 64<<20))
}

// TestChainRefusals: a backing chain that loops, one deeper than
// MaxDepth, and a backing file the Opener refuses.
func TestChainRefusals(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.qcow2"), filepath.Join(dir, "b.qcow2"), filepath.Join(dir, "c.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", a, "1M")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", "a.qcow2", "-F", "qcow2", b, "1M")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", "b.qcow2", "-F", "qcow2", c, "1M")
	open := func(path string, opts Options) error {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		im, err := Open(f, opts)
		if err == nil {
			im.Close()
		}
		return err
	}
	if err := open(c, Options{Opener: FileOpener, MaxDepth: 1}); !isCause(err, ErrChainTooDeep) {
		t.Errorf("depth 2 with MaxDepth 1: %v; want ErrChainTooDeep", err)
	}
	if err := open(c, Options{Opener: FileOpener, MaxDepth: 2}); err != nil {
		t.Errorf("depth 2 with MaxDepth 2: %v", err)
	}
	if err := open(c, Options{}); !isCause(err, ErrBackingRefused) {
		t.Errorf("no Opener: %v; want ErrBackingRefused", err)
	}
	// a -> c: the chain c -> b -> a -> c loops.
	qemuImg(t, "rebase", "-u", "-f", "qcow2", "-b", "c.qcow2", "-F", "qcow2", a)
	if err := open(c, Options{Opener: FileOpener}); !isCause(err, ErrBackingLoop) {
		t.Errorf("a loop: %v; want ErrBackingLoop", err)
	}
	// An image that is its own backing file.
	qemuImg(t, "rebase", "-u", "-f", "qcow2", "-b", "a.qcow2", "-F", "qcow2", a)
	if err := open(a, Options{Opener: FileOpener}); !isCause(err, ErrBackingLoop) {
		t.Errorf("its own backing file: %v; want ErrBackingLoop", err)
	}
	// A backing format this package does not read.
	qemuImg(t, "rebase", "-u", "-f", "qcow2", "-b", "b.qcow2", "-F", "vmdk", a)
	if err := open(a, Options{Opener: FileOpener}); !isCause(err, ErrUnsupported) {
		t.Errorf("a vmdk backing file: %v; want ErrUnsupported", err)
	}
}
