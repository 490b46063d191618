package qcow2

import (
	"bytes"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"github.com/ringcp/ringcp/internal/inflate"
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

func newCompressor(c Compression, clusterSize int64) (compressor, error) {
	switch c {
	case CompressZlib:
		return deflater{}, nil
	case CompressZstd:
		return zstdCompressor(clusterSize)
	}
	return nil, nil
}

// deflateLevel is klauspost's level for clusters larger than 32 KiB
// (smaller ones go to deflateSmall, whose 3-byte matches make them
// smaller than zlib's): its first level with zlib's block structure,
// QEMU's deflate (zlib, level 6, memLevel 9): it ends a block every 32 Ki
// symbols and codes each one as stored, fixed or dynamic, whichever is
// shortest. Its levels 1 to 6 code up to 64 KiB of input as one block,
// with one Huffman code (or none, if matches removed less than 1/16 of
// it): a 64 KiB cluster that mixes incompressible bytes with ones that
// compress (small files packed together) came out up to 13% larger than
// zlib's, or did not shrink at all, and images 4 to 5% larger than
// qemu-img's (TestWriterNoLargerMixed; issue 24's bench). Level 7 costs
// 1.0 to 1.8 times level 6's CPU per cluster, the most on mixed clusters
// (BenchmarkDeflate). Its 4-byte matches cost less at 64 KiB, where its
// 32 KiB window finds what zlib's 4 KiB one cannot. A window of 32 KiB
// reads back in QEMU, which inflates a cluster with one call into the
// whole cluster: its 4 KiB window (windowBits -12) limits only what one
// call may refer to across calls.
const deflateLevel = 7

// newFlateWriter makes the deflate writers.
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
	if len(src) <= deflateSmallMax {
		start := len(dst)
		dst = ownDeflate(dst, src)
		if decodesTo(wholeInflater{}, dst[start:], src) {
			return dst, nil
		}
		dst = dst[:start]
	}
	return deflateLibrary(dst, src)
}

// deflateLibrary is klauspost's deflate at deflateLevel.
func deflateLibrary(dst, src []byte) ([]byte, error) {
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

// zstdEncoders are shared: EncodeAll runs on as many goroutines at once
// as there are CPUs. No checksum (QEMU writes none: the image's own check
// is its refcounts), one segment (a cluster is one frame: its header then
// needs no window size). The level is chosen by cluster size so that the
// image is no larger than qemu-img convert -c makes with zstd's level 3:
// the library's levels compress a little less than zstd's own at the
// same name (see TestWriter), so clusters of 16 KiB and less take its
// best level (their frames are small, their headers weigh: with "better"
// the programs of /usr/bin made images 1.015x qemu-img -c's at 8 and 16
// KiB clusters, 0.995x at 32 KiB), larger ones its "better" level
// ("best" makes 64 KiB clusters 3% smaller at 4.1 times its CPU, more
// than zstd's speed target leaves room for). Its matches
// take fewer bytes than zstd's level 3; what it lost was literals it left
// raw (huffLiterals): on issue 24's bench disk (64 KiB clusters, seed 1)
// the image was 1.003x qemu-img -c's, 0.992x with them coded.
var zstdEncoders = [2]func() (*zstd.Encoder, error){
	sync.OnceValues(func() (*zstd.Encoder, error) { return newZstdEncoder(zstd.SpeedBetterCompression) }),
	sync.OnceValues(func() (*zstd.Encoder, error) { return newZstdEncoder(zstd.SpeedBestCompression) }),
}

func newZstdEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderCRC(false),
		zstd.WithSingleSegment(true),
		zstd.WithWindowSize(1<<maxClusterBits))
}

// zstdBestMax is the largest cluster the library's best level codes.
const zstdBestMax = 16 << 10

type zstdEnc struct{ e *zstd.Encoder }

func zstdCompressor(clusterSize int64) (compressor, error) {
	pick := zstdEncoders[0]
	if clusterSize <= zstdBestMax {
		pick = zstdEncoders[1]
	}
	e, err := pick()
	if err != nil {
		return nil, err
	}
	return zstdEnc{e}, nil
}

// compress encodes src as one frame, then Huffman codes again the
// literals the library left raw (huffLiterals).
func (z zstdEnc) compress(dst, src []byte) ([]byte, error) {
	buf := getBuf(len(src) + len(src)>>4 + 64)
	frame := z.e.EncodeAll(src, buf[:0])
	start := len(dst)
	dst = ownLiterals(dst, frame)
	recoded := !bytes.Equal(dst[start:], frame)
	if recoded && !decodesTo(zstdDecompressor{}, dst[start:], src) {
		dst = append(dst[:start], frame...)
	}
	putBuf(frame[:cap(frame)])
	return dst, nil
}

// The encoders of our own, as variables so that a test can break them.
var (
	ownDeflate  = deflateSmall
	ownLiterals = huffLiterals
)

// decodesTo says enc decodes to src, all of it. The clusters of the two
// encoders of our own (deflateSmall, and huffLiterals' recoding of the
// library's frames) are decoded again before they are stored, and ones
// that do not come back are stored as the library codes them: a mistake
// in those encoders would otherwise write a cluster that reads back
// wrong without an error, seen only by a --verify or a qemu-img compare.
// A decode costs a small part of an encode (about a tenth).
func decodesTo(d decompressor, enc, src []byte) bool {
	check := getBuf(len(src))
	defer putBuf(check)
	return d.decompress(check, enc) == nil && bytes.Equal(check, src)
}

// wholeInflater decodes a deflate stream that must end where dst is
// full, its end code whole (inflate.DecodeWhole): what zlib, QEMU's
// inflate, reads back exactly.
type wholeInflater struct{}

func (wholeInflater) decompress(dst, src []byte) error { return inflate.DecodeWhole(dst, src) }
