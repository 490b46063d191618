package unpack

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkUnpack decompresses a 96 MiB image (image(): zeros, text,
// random runs) made by each tool, on one core and on all, and runs the
// format's own tool on it for reference (-dc to /dev/null: what `xz -dc
// | dd` pays for decoding). MB/s are of decompressed bytes; cpu-s/op is
// the CPU time used (ours, or the tool's), which a busy machine does not
// distort as it does the wall clock.
//
//	go test -run - -bench Unpack -benchtime 3x -count 5 ./unpack/
func BenchmarkUnpack(b *testing.B) {
	const size = 96 << 20
	raw := image(size, 42)
	for _, bc := range []struct {
		name  string
		tools []string
		cmd   string
		tool  string
	}{
		{"xz-T0", []string{"xz"}, `xz -T0 -c "$IN" > "$OUT"`, "xz -dc"},
		{"xz-T1", []string{"xz"}, `xz -T1 -c "$IN" > "$OUT"`, "xz -dc"},
		{"zstd-T0", []string{"zstd"}, `zstd -q -T0 -c "$IN" > "$OUT"`, "zstd -dcq"},
		{"pzstd", []string{"pzstd"}, `pzstd -q -c "$IN" > "$OUT"`, "pzstd -dcq"},
		{"gzip", []string{"gzip"}, `gzip -c "$IN" > "$OUT"`, "gzip -dc"},
		{"pigz", []string{"pigz"}, `pigz -c "$IN" > "$OUT"`, "pigz -dc"},
		{"bzip2", []string{"bzip2"}, `bzip2 -c "$IN" > "$OUT"`, "bzip2 -dc"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			need(b, bc.tools...)
			packed := compress(b, raw, bc.cmd)
			for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
				b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
					b.SetBytes(size)
					defer reportCPU(b, syscall.RUSAGE_SELF)()
					for i := 0; i < b.N; i++ {
						r, err := NewReader(bytes.NewReader(packed), Options{Threads: threads})
						if err != nil {
							b.Fatal(err)
						}
						if n, err := io.Copy(io.Discard, r); err != nil || n != size {
							b.Fatal(n, err)
						}
						r.Close()
					}
				})
			}
			b.Run("tool", func(b *testing.B) {
				b.SetBytes(size)
				defer reportCPU(b, syscall.RUSAGE_CHILDREN)()
				for i := 0; i < b.N; i++ {
					c := exec.Command("sh", "-c", bc.tool+" > /dev/null")
					c.Stdin = bytes.NewReader(packed)
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// reportCPU reports the CPU time who (this process, or its waited-for
// children) used per op, from now to the call of what it returns.
func reportCPU(b *testing.B, who int) func() {
	start := cpuTime(who)
	return func() {
		b.ReportMetric((cpuTime(who)-start)/float64(b.N), "cpu-s/op")
	}
}

func cpuTime(who int) float64 {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// sparseImage is n bytes shaped like the bench's sparse VM image: 1/16
// random data in runs of 64 KiB to 1 MiB, zeros between them.
func sparseImage(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for data := 0; data < n/16; {
		run := min(64<<10+r.IntN(1<<20), n/16-data)
		off := r.IntN(n - run)
		for i := off; i < off+run; i++ {
			b[i] = byte(r.Uint32())
		}
		data += run
	}
	return b
}

// BenchmarkUnpackSparse decompresses a 256 MiB mostly-zero image, the
// shape of a cloud image, as the cdi-xz bench packs it (xz -T0 -1: many
// blocks with their sizes) and as a single-threaded xz -6 does (one
// block decoded in place), on one core and on all, with xz -dc for
// reference.
//
//	go test -run - -bench UnpackSparse -benchtime 2x -count 5 ./unpack/
func BenchmarkUnpackSparse(b *testing.B) {
	const size = 256 << 20
	raw := sparseImage(size, 42)
	for _, bc := range []struct{ name, cmd string }{
		{"xz-T0-1", `xz -T0 -1 -c "$IN" > "$OUT"`},
		{"xz-T1-6", `xz -T1 -6 -c "$IN" > "$OUT"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			need(b, "xz")
			packed := compress(b, raw, bc.cmd)
			for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
				b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
					b.SetBytes(size)
					defer reportCPU(b, syscall.RUSAGE_SELF)()
					for i := 0; i < b.N; i++ {
						r, err := NewReader(bytes.NewReader(packed), Options{Threads: threads})
						if err != nil {
							b.Fatal(err)
						}
						if n, err := io.Copy(io.Discard, r); err != nil || n != size {
							b.Fatal(n, err)
						}
						r.Close()
					}
				})
			}
			b.Run("tool", func(b *testing.B) {
				b.SetBytes(size)
				defer reportCPU(b, syscall.RUSAGE_CHILDREN)()
				for i := 0; i < b.N; i++ {
					c := exec.Command("sh", "-c", "xz -dc > /dev/null")
					c.Stdin = bytes.NewReader(packed)
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
