package qcow2

import (
	"bytes"
	stdflate "compress/flate"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	kflate "github.com/klauspost/compress/flate"
)

// benchSource is a disk of 128 MiB that compresses about 3:1 (text with
// random words, like a filesystem of logs and binaries).
func benchSource(b *testing.B, path string) []byte {
	b.Helper()
	const size = 128 << 20
	rng := rand.New(rand.NewSource(1))
	words := []string{"qcow2 ", "cluster ", "the ", "guest ", "reads ", "4096 ", "io_uring ", "\n"}
	buf := make([]byte, 0, size)
	for len(buf) < size {
		if rng.Intn(8) == 0 {
			r := make([]byte, rng.Intn(64)+1)
			rng.Read(r)
			buf = append(buf, r...)
		} else {
			buf = append(buf, words[rng.Intn(len(words))]...)
		}
	}
	buf = buf[:size]
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	return buf
}

// BenchmarkReadAt reads a 128 MiB image in 8 MiB blocks, as the engine
// does, from GOMAXPROCS goroutines at once: plain clusters (host reads
// from the page cache), and compressed ones (decompression on every
// core).
func BenchmarkReadAt(b *testing.B) {
	needQemu(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src.raw")
	benchSource(b, src)
	for _, c := range []struct{ name, opts string }{
		{"plain", ""},
		{"zlib", "-c -o compression_type=zlib"},
		{"zstd", "-c -o compression_type=zstd"},
	} {
		img := filepath.Join(dir, c.name+".qcow2")
		args := []string{"convert", "-O", "qcow2"}
		if c.opts != "" {
			args = append(args, strings.Fields(c.opts)...)
		}
		qemuImg(b, append(args, src, img)...)
		b.Run(c.name, func(b *testing.B) {
			im := openPath(b, img, Options{})
			const block = 8 << 20
			var next atomic.Int64
			b.SetBytes(block)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				p := make([]byte, block)
				for pb.Next() {
					off := next.Add(block) % im.Size()
					if _, err := im.ReadAt(p, off); err != nil && err != io.EOF {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkInflate decompresses 64 KiB clusters of text (benchSource)
// and of programs (usrBinaries) with the inflater (internal/inflate),
// the standard library's deflate reader and klauspost's. It reports the
// process's CPU time per GB decompressed, the figure to compare: the
// machine is shared, so wall time per op says as much about the others.
func BenchmarkInflate(b *testing.B) {
	for _, data := range []struct {
		name string
		src  func() []byte
	}{
		{"text", func() []byte { return benchSource(b, filepath.Join(b.TempDir(), "src.raw"))[:16<<20] }},
		{"programs", func() []byte { return usrBinaries(b, 16<<20) }},
	} {
		src := data.src()
		var clusters [][]byte
		for off := 0; off+64<<10 <= len(src); off += 64 << 10 {
			c, _ := deflater{}.compress(nil, src[off:off+64<<10])
			clusters = append(clusters, c)
		}
		b.Run(data.name, func(b *testing.B) { benchInflaters(b, clusters) })
	}
}

func benchInflaters(b *testing.B, clusters [][]byte) {
	b.Run("inflater", func(b *testing.B) {
		dst := make([]byte, 64<<10)
		measureCPU(b, 64<<10, func(i int) error {
			return inflater{}.decompress(dst, clusters[i%len(clusters)])
		})
	})
	for _, lib := range []struct {
		name string
		new  func(io.Reader) io.ReadCloser
	}{
		{"std", func(r io.Reader) io.ReadCloser { return stdflate.NewReader(r) }},
		{"klauspost", func(r io.Reader) io.ReadCloser { return kflate.NewReader(r) }},
	} {
		b.Run(lib.name, func(b *testing.B) {
			var br bytes.Reader
			fr := lib.new(&br)
			dst := make([]byte, 64<<10)
			measureCPU(b, 64<<10, func(i int) error {
				br.Reset(clusters[i%len(clusters)])
				fr.(stdflate.Resetter).Reset(&br, nil)
				_, err := io.ReadFull(fr, dst)
				return err
			})
		})
	}
}

// measureCPU runs op b.N times, each giving n bytes, and reports the
// process's CPU seconds (user and system) per GB.
func measureCPU(b *testing.B, n int64, op func(i int) error) {
	b.SetBytes(n)
	b.ResetTimer()
	start := cpuSeconds()
	for i := range b.N {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-start)/(float64(n)*float64(b.N)/1e9), "cpu-s/GB")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkWriter writes the 128 MiB source into a new image in 8 MiB
// blocks from GOMAXPROCS goroutines: plain, zlib and zstd.
func BenchmarkWriter(b *testing.B) {
	dir := b.TempDir()
	src := benchSource(b, filepath.Join(dir, "src.raw"))
	for _, comp := range []Compression{CompressNone, CompressZlib, CompressZstd} {
		b.Run(comp.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for range b.N {
				f, err := os.Create(filepath.Join(dir, "new.qcow2"))
				if err != nil {
					b.Fatal(err)
				}
				w, err := Create(f, WriterOptions{Size: int64(len(src)), Compression: comp})
				if err != nil {
					b.Fatal(err)
				}
				var next atomic.Int64
				const block = 8 << 20
				done := make(chan struct{})
				for range 4 {
					go func() {
						defer func() { done <- struct{}{} }()
						for {
							off := next.Add(block) - block
							if off >= int64(len(src)) {
								return
							}
							if _, err := w.WriteAt(src[off:off+block], off); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				for range 4 {
					<-done
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}

// BenchmarkDeflate compresses 64 KiB clusters of text (benchSource),
// programs (usrBinaries) and small files of both kinds packed together
// (mixedRaw) with klauspost's deflate at levels 6 to 8 (deflateLevel is
// 7). It reports the process's CPU time per GB of clusters and the bytes
// stored per byte of cluster (a cluster that does not shrink is stored
// as it is), the figures to compare.
func BenchmarkDeflate(b *testing.B) {
	for _, data := range []struct {
		name string
		src  func() []byte
	}{
		{"text", func() []byte { return benchSource(b, filepath.Join(b.TempDir(), "src.raw"))[:16<<20] }},
		{"programs", func() []byte { return usrBinaries(b, 16<<20) }},
		{"mixed", func() []byte { return mixedRaw(b, filepath.Join(b.TempDir(), "src.raw"), 16<<20, 5) }},
	} {
		src := data.src()
		const cs = 64 << 10
		for level := 6; level <= 8; level++ {
			b.Run(fmt.Sprintf("%s/level=%d", data.name, level), func(b *testing.B) {
				var out bytes.Buffer
				fw, _ := kflate.NewWriter(&out, level)
				stored := 0
				measureCPU(b, cs, func(i int) error {
					off := i % (len(src) / cs) * cs
					out.Reset()
					fw.Reset(&out)
					if _, err := fw.Write(src[off : off+cs]); err != nil {
						return err
					}
					err := fw.Close()
					stored += min(out.Len(), cs)
					return err
				})
				b.ReportMetric(float64(stored)/float64(b.N*cs), "stored/B")
			})
		}
	}
}
