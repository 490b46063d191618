package unpack

import (
	"bytes"
	"encoding/binary"
)

// Format is how a source's bytes are packed.
type Format int

// Formats. Auto is Options' "recognize it"; Raw is bytes as they are.
const (
	Auto Format = iota
	Raw
	Gzip
	Xz
	Zstd
	Bzip2
)

var formatNames = map[Format]string{Auto: "auto", Raw: "raw", Gzip: "gzip", Xz: "xz", Zstd: "zstd", Bzip2: "bzip2"}

func (f Format) String() string { return formatNames[f] }

// ParseFormat reads a format's name (as String gives it).
func ParseFormat(s string) (Format, bool) {
	for f, name := range formatNames {
		if name == s {
			return f, true
		}
	}
	return Auto, false
}

// HeadSize is how many first bytes Detect wants to be sure.
const HeadSize = 16

var (
	xzMagic    = []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}
	gzipMagic  = []byte{0x1F, 0x8B, 0x08} // deflate, the only method
	bzip2Magic = []byte("BZh")
)

const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // the low 4 bits are free
)

// Detect names the format of a source from its first bytes (HeadSize or
// all there are): Raw when none matches.
func Detect(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, xzMagic):
		return Xz
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case isZstd(head):
		return Zstd
	case isBzip2(head):
		return Bzip2
	}
	return Raw
}

// isZstd: a frame's magic, or a skippable frame's (pzstd starts with
// one that records the frame sizes).
func isZstd(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	m := binary.LittleEndian.Uint32(head)
	return m == zstdMagic || m&^0xF == zstdSkippableMagic
}

// isBzip2: "BZh", a block size digit, then a block's magic (pi) or the
// end of stream's (sqrt(pi)) for an empty stream.
func isBzip2(head []byte) bool {
	if len(head) < 10 || !bytes.HasPrefix(head, bzip2Magic) || head[3] < '1' || head[3] > '9' {
		return false
	}
	block := []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	end := []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
	return bytes.Equal(head[4:10], block) || bytes.Equal(head[4:10], end)
}
