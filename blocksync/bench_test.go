package blocksync

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/synctest"
)

// How the two sides of a granule are best compared: locally both are in
// memory, and bytes.Equal (the runtime's vectorized memequal) beats
// hashing both by two orders of magnitude. A digest is only worth its
// cost when one side is on another host. The figures are per granule
// of SRC (SetBytes: one side's bytes).

func BenchmarkCompare(b *testing.B) {
	src := synctest.Random(1, MaxGranule)
	dst := append([]byte{}, src...)
	key := make([]byte, KeySize)
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(MaxGranule)
		for range b.N {
			if Compare(0, src, dst, MaxGranule, nil) != nil {
				b.Fatal("differ")
			}
		}
	})
	for _, alg := range Algorithms {
		b.Run(alg.String(), func(b *testing.B) {
			d, _ := NewDigester(alg, key)
			b.SetBytes(MaxGranule)
			for range b.N {
				if d.Sum(src) != d.Sum(dst) {
					b.Fatal("differ")
				}
			}
		})
	}
}

// BenchmarkDigest is one side's hashing, what each host of a remote sync
// does for every granule of its end.
func BenchmarkDigest(b *testing.B) {
	src := synctest.Random(1, MaxGranule)
	for _, alg := range Algorithms {
		b.Run(alg.String(), func(b *testing.B) {
			d, _ := NewDigester(alg, make([]byte, KeySize))
			b.SetBytes(MaxGranule)
			for range b.N {
				d.Sum(src)
			}
		})
	}
	b.Run("zero-granule", func(b *testing.B) {
		d, _ := NewDigester(BLAKE2b256, make([]byte, KeySize))
		z := make([]byte, MaxGranule)
		b.SetBytes(MaxGranule)
		for range b.N {
			d.Sum(z)
		}
	})
}

// BenchmarkSync syncs a 64 MiB file with 1% of its granules changed
// onto its old version, both in the page cache, restoring DST between
// rounds: the CPU and syscall cost of the reference implementation,
// not the disk's (bench/ measures that, caches dropped).
func BenchmarkSync(b *testing.B) {
	const size = 64 << 20
	dir := b.TempDir()
	old := synctest.Random(2, size)
	src := append([]byte{}, old...)
	r := rand.New(rand.NewPCG(1, 1))
	var changed int64
	for range size / DefaultGranule / 100 {
		off := r.Int64N(size/DefaultGranule) * DefaultGranule
		copy(src[off:], synctest.Random(uint64(off), DefaultGranule))
		changed += DefaultGranule
	}
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []Algorithm{0, BLAKE2b256, SHA256} {
		name := "bytes"
		if mode != 0 {
			name = mode.String()
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				b.StopTimer()
				if err := os.WriteFile(dstPath, old, 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				st := benchSync(b, srcPath, dstPath, Options{Digest: mode})
				if st.Written != changed {
					b.Fatalf("wrote %d, changed %d", st.Written, changed)
				}
			}
			b.ReportMetric(float64(changed)/float64(size)*100, "%changed")
		})
	}
}

func benchSync(b *testing.B, srcPath, dstPath string, opt Options) Stats {
	src, err := OpenSource(srcPath)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := OpenTarget(dstPath, TargetOptions{Src: src})
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	st, err := Sync(context.Background(), src, dst, opt)
	if err != nil {
		b.Fatal(fmt.Errorf("sync: %w", err))
	}
	return st
}
