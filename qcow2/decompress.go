package qcow2

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/ringcp/ringcp/internal/inflate"
)

// decompressor fills dst (one cluster) from a compressed cluster's bytes,
// src, which may run on past the compressed data (QEMU records its length
// only to the end of a 512-byte sector, and packs the next cluster right
// after it). Like QEMU, it stops when dst is full and fails if the data
// ends before. It is safe for concurrent use.
type decompressor interface {
	decompress(dst, src []byte) error
}

func newDecompressor(compressionType uint8, clusterSize int64) decompressor {
	if compressionType == compressZstd {
		return zstdDecompressor{}
	}
	return inflater{}
}

// inflater reads raw deflate (QEMU's zlib type: windowBits -12, no zlib
// header) with internal/inflate, which decodes straight into dst.
type inflater struct{}

func (inflater) decompress(dst, src []byte) error { return inflate.Decode(dst, src) }

// zstdDecoder is shared by every image: DecodeAll runs on as many
// goroutines at once as there are CPUs, each with a decoder of its own
// from the library's pool. Memory is bounded to two of the largest
// clusters whatever a frame claims.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(2<<maxClusterBits),
		zstd.WithDecoderMaxWindow(2<<maxClusterBits))
})

type zstdDecompressor struct{}

// decompress decodes frame after frame until dst is full (QEMU's
// qcow2_zstd_decompress loops the same way): it hands the decoder one
// whole frame at a time, because what follows the last frame is the
// start of the next cluster's data.
func (zstdDecompressor) decompress(dst, src []byte) error {
	d, err := zstdDecoder()
	if err != nil {
		return err
	}
	out := dst[:0:len(dst)] // never past dst: it may be part of a larger buffer
	for len(out) < len(dst) {
		n, err := zstdFrameLen(src)
		if err != nil {
			return err
		}
		if out, err = d.DecodeAll(src[:n], out); err != nil {
			return fmt.Errorf("zstd: %w", err)
		}
		if len(out) > len(dst) || len(out) > 0 && &out[0] != &dst[0] {
			return errors.New("zstd: cluster decompresses to more than a cluster")
		}
		src = src[n:]
	}
	return nil
}

var errZstdFrame = errors.New("zstd: truncated or invalid frame")

// zstdFrameLen is the length of the frame (or skippable frame) that b
// starts with, from its header and block headers (RFC 8878 section 3.1).
func zstdFrameLen(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, errZstdFrame
	}
	m := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	if m&0xfffffff0 == 0x184d2a50 { // skippable frame
		n := 8 + int64(uint32(b[4])|uint32(b[5])<<8|uint32(b[6])<<16|uint32(b[7])<<24)
		if n > int64(len(b)) {
			return 0, errZstdFrame
		}
		return int(n), nil
	}
	if m != 0xfd2fb528 {
		return 0, errZstdFrame
	}
	fhd := b[4]
	single := fhd>>5&1 == 1
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary ID
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	pos += fcs
	for {
		if pos+3 > len(b) {
			return 0, errZstdFrame
		}
		h := int(b[pos]) | int(b[pos+1])<<8 | int(b[pos+2])<<16
		pos += 3
		switch h >> 1 & 3 {
		case 1: // RLE: one byte repeated
			pos++
		case 3:
			return 0, errZstdFrame
		default: // raw or compressed: the size is the block's length
			pos += h >> 3
		}
		if h&1 == 1 {
			break
		}
	}
	if fhd>>2&1 == 1 {
		pos += 4 // content checksum
	}
	if pos > len(b) {
		return 0, errZstdFrame
	}
	return pos, nil
}

// Buffers for host reads and whole clusters, pooled by power-of-two size
// so that a steady copy allocates nothing.
var bufPools [32]sync.Pool

func getBuf(n int) []byte {
	c := sizeClass(n)
	if b, ok := bufPools[c].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, 1<<c)
}

func putBuf(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) != 1<<c {
		return
	}
	bufPools[c].Put(&b)
}

// sizeClass is the smallest c with 1<<c >= n.
func sizeClass(n int) int {
	c := 0
	for 1<<c < n {
		c++
	}
	return c
}
