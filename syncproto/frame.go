package syncproto

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// A frame: an 8-byte header (type, three zero bytes, payload length as
// a big-endian uint32), the payload, and a CRC-32C of header and payload.
// ssh's MAC already guards the bytes in transit; the CRC catches what it
// cannot: a peer that is not ringcp, a stream that lost its framing
// (another program writing to the server's stdout), our own bugs. Each
// type has a most payload it may carry, checked from the header before a
// byte of payload is read, so no length from the wire ever sizes an
// allocation: a connection reads into one buffer of maxFrame bytes.

type frameType uint8

// Frame types; the values are on the wire.
const (
	tHello   frameType = iota + 1 // client: version, role, path, granule, key, digest speeds
	tWelcome                      // server: version, digest, its end's size and identity
	tStart                        // source: SRC's size
	tDigests                      // target: the digests of DST's next granules
	tAck                          // source: every change before a granule was sent
	tData                         // source: SRC's bytes for differing granules
	tZero                         // source: differing granules that are zeros in SRC
	tEnd                          // source: the whole digest of SRC
	tDone                         // target: DST's whole digest, after fsync
	tError                        // either: what failed, and where
	numTypes
)

func (t frameType) String() string {
	names := [...]string{"?", "hello", "welcome", "start", "digests", "ack", "data", "zero", "end", "done", "error"}
	if t < numTypes {
		return names[t]
	}
	return fmt.Sprintf("frame type %d", uint8(t))
}

// Bounds of the payloads.
const (
	// MaxData is the most SRC bytes one data frame carries: 16 granules
	// of the largest size, enough to keep ssh's pipe full.
	MaxData = 1 << 20
	// maxDigests is the most digests in one frame (64 KiB of them).
	maxDigests = 2048
	maxPath    = 4096
	maxText    = 4096 // a message, an op, in an error frame

	headerLen  = 8
	trailerLen = 4
)

// maxPayload is each type's largest payload.
var maxPayload = [numTypes]int{
	tHello:   64 + keyLen + 256 + maxPath,
	tWelcome: 512,
	tStart:   8,
	tDigests: 8 + maxDigests*digestLen,
	tAck:     8,
	tData:    8 + MaxData,
	tZero:    16,
	tEnd:     digestLen + 8,
	tDone:    digestLen + 5*8,
	tError:   64 + 4*maxText,
}

// maxFrame is the largest payload of any type.
const maxFrame = 8 + MaxData

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameReader reads frames from the peer.
type frameReader struct {
	r    *bufio.Reader
	buf  []byte // maxFrame + header + trailer, allocated once
	read int64  // bytes read, for the report
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 256<<10), buf: make([]byte, headerLen+maxFrame+trailerLen)}
}

// next reads one frame; its payload is valid until the next call. A
// stream that ends between frames returns io.EOF; anywhere else,
// io.ErrUnexpectedEOF.
func (fr *frameReader) next() (frameType, []byte, error) {
	h := fr.buf[:headerLen]
	if _, err := io.ReadFull(fr.r, h); err != nil {
		return 0, nil, err
	}
	t, n := frameType(h[0]), binary.BigEndian.Uint32(h[4:])
	switch {
	case t == 0 || t >= numTypes:
		return 0, nil, protoErrorf("unknown frame type %d (is the peer ringcp sync --serve?)", h[0])
	case h[1]|h[2]|h[3] != 0:
		return 0, nil, protoErrorf("%v frame with reserved bytes %x set", t, h[1:4])
	case int64(n) > int64(maxPayload[t]):
		return 0, nil, protoErrorf("%v frame of %d bytes, more than its %d", t, n, maxPayload[t])
	}
	whole := fr.buf[:headerLen+int(n)+trailerLen]
	if _, err := io.ReadFull(fr.r, whole[headerLen:]); err != nil {
		return 0, nil, unexpected(err)
	}
	fr.read += int64(len(whole))
	body := whole[:headerLen+int(n)]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(whole[len(body):]); got != want {
		return 0, nil, protoErrorf("%v frame of %d bytes fails its checksum (CRC-32C %08x, the frame says %08x)", t, n, got, want)
	}
	return t, body[headerLen:], nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// frameWriter writes frames to the peer; it is safe for several
// goroutines, each frame going out whole.
type frameWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	written int64
	err     error // the first failure: later writes fail with it
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

// write sends a frame of type t whose payload is the concatenation of
// parts, and flushes it.
func (fw *frameWriter) write(t frameType, parts ...[]byte) error {
	return fw.writeFrames(outFrame{t, parts})
}

// outFrame is a frame to write: its type, and its payload in parts.
type outFrame struct {
	t     frameType
	parts [][]byte
}

// writeFrames sends frames in order and flushes them once, in one write
// when they fit the buffer: over a transport without a buffer of its own
// (a pipe), the peer's first read then takes them all, so a peer that
// answers the first (with an error) before it reads the second does not
// leave this writer blocked on it.
func (fw *frameWriter) writeFrames(frames ...outFrame) error {
	total := 0
	for _, f := range frames {
		n := 0
		for _, p := range f.parts {
			n += len(p)
		}
		if n > maxPayload[f.t] {
			return fmt.Errorf("syncproto: a %v frame of %d bytes, more than its %d", f.t, n, maxPayload[f.t])
		}
		total += headerLen + n + trailerLen
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		return fw.err
	}
	for _, f := range frames {
		fw.put(f)
	}
	if err := fw.w.Flush(); err != nil {
		fw.err = err
		return err
	}
	fw.written += int64(total)
	return nil
}

// put buffers one frame, whose size was checked; fw.mu is held.
func (fw *frameWriter) put(f outFrame) {
	n := 0
	for _, p := range f.parts {
		n += len(p)
	}
	var h [headerLen]byte
	h[0] = byte(f.t)
	binary.BigEndian.PutUint32(h[4:], uint32(n))
	crc := crc32.Update(0, castagnoli, h[:])
	fw.w.Write(h[:])
	for _, p := range f.parts {
		crc = crc32.Update(crc, castagnoli, p)
		fw.w.Write(p)
	}
	var tr [trailerLen]byte
	binary.BigEndian.PutUint32(tr[:], crc)
	fw.w.Write(tr[:])
}

// sent is how many bytes went out.
func (fw *frameWriter) sent() int64 {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.written
}
