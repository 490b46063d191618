package qcow2

import (
	"bytes"
	"compress/flate"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compression is how a Writer compresses clusters.
type Compression uint8

const (
	CompressNone Compression = iota
	// CompressZlib is QEMU's "zlib" type: raw deflate, what
	// qemu-img convert -c writes by default.
	CompressZlib
	// CompressZstd is QEMU's "zstd" type (compression_type=zstd, QEMU 5.1
	// and later).
	CompressZstd
)

func (c Compression) String() string {
	switch c {
	case CompressZlib:
		return "zlib"
	case CompressZstd:
		return "zstd"
	}
	return "none"
}

// compressor compresses one cluster, appending to dst; the result is
// used only when shorter than a cluster (else the cluster is stored as
// it is, as QEMU does). It is safe for concurrent use.
type compressor interface {
	compress(dst, src []byte) ([]byte, error)
}

func newCompressor(c Compression) (compressor, error) {
	switch c {
	case CompressZlib:
		return deflater{}, nil
	case CompressZstd:
		return zstdCompressor()
	}
	return nil, nil
}

// deflateLevel is zlib's default, QEMU's level. A window of 32 KiB (Go's)
// reads back in QEMU, which inflates a cluster with one call into the
// whole cluster: its 4 KiB window (windowBits -12) limits only what one
// call may refer to across calls.
const deflateLevel = 6

// newFlateWriter makes the deflate writers; see BenchmarkDeflate.
var newFlateWriter = func(w io.Writer) (io.WriteCloser, flateReset) {
	fw, _ := flate.NewWriter(w, deflateLevel)
	return fw, fw.Reset
}

type flateReset func(io.Writer)

type flateWriter struct {
	out   bytes.Buffer
	w     io.WriteCloser
	reset flateReset
}

var flateWriters = sync.Pool{New: func() any {
	f := &flateWriter{}
	f.w, f.reset = newFlateWriter(&f.out)
	return f
}}

type deflater struct{}

func (deflater) compress(dst, src []byte) ([]byte, error) {
	f := flateWriters.Get().(*flateWriter)
	defer flateWriters.Put(f)
	f.out.Reset()
	f.reset(&f.out)
	if _, err := f.w.Write(src); err != nil {
		return nil, err
	}
	if err := f.w.Close(); err != nil {
		return nil, err
	}
	return append(dst, f.out.Bytes()...), nil
}

// zstdEncoder is shared: EncodeAll runs on as many goroutines at once as
// there are CPUs. Level 3, zstd's default and QEMU's; no checksum (QEMU
// writes none: the image's own checks are its refcounts).
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithEncoderLevel(zstdLevel),
		zstd.WithEncoderCRC(false),
		zstd.WithWindowSize(1<<maxClusterBits))
})

var zstdLevel = zstd.SpeedDefault

type zstdEnc struct{ e *zstd.Encoder }

func zstdCompressor() (compressor, error) {
	e, err := zstdEncoder()
	if err != nil {
		return nil, err
	}
	return zstdEnc{e}, nil
}

func (z zstdEnc) compress(dst, src []byte) ([]byte, error) {
	return z.e.EncodeAll(src, dst), nil
}
