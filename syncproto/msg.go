package syncproto

import (
	"encoding/binary"
	"math"

	"github.com/ringcp/ringcp/blocksync"
)

// The messages, encoded and decoded on bytes alone (no I/O): every
// decoder checks lengths and ranges and fails with ErrProtocol on
// anything else, so that fuzz_test.go can feed them garbage.

// Version is the protocol this ringcp speaks. A peer of another version
// is refused at the handshake, naming both.
const Version = 1

// magic opens a hello, so that a server fed anything else stops at once.
const magic = "RINGSYNC"

const (
	keyLen    = blocksync.KeySize
	digestLen = len(blocksync.Digest{})
)

// role is what the server does.
type role uint8

const (
	roleTarget role = 1 // the server holds DST: it sends digests and applies changes
	roleSource role = 2 // the server holds SRC: it reads digests and sends changes
)

// hello is the client's first frame.
type hello struct {
	version uint16
	role    role
	create  bool // roleTarget: a missing DST may be made
	force   bool // roleTarget: lift the in-use refusal (and an image DST's)
	rawSrc  bool // roleSource: send a SRC that is a disk image or compressed as its bytes
	rawDst  bool // roleTarget: write raw bytes over a DST that is a disk image
	verify  bool // the target reads DST back from the device before done (verify.go)
	granule uint32
	key     [keyLen]byte
	speeds  map[blocksync.Algorithm]float64 // bytes a second, on the client
	path    string
}

func (h hello) encode() []byte {
	b := append([]byte(magic), 0, 0)
	binary.BigEndian.PutUint16(b[len(magic):], h.version)
	var flags byte
	if h.create {
		flags |= 1
	}
	if h.force {
		flags |= 2
	}
	if h.rawSrc {
		flags |= 4
	}
	if h.rawDst {
		flags |= 8
	}
	if h.verify {
		flags |= 16
	}
	b = append(b, byte(h.role), flags)
	b = binary.BigEndian.AppendUint32(b, h.granule)
	b = append(b, h.key[:]...)
	b = appendSpeeds(b, h.speeds)
	return appendString(b, h.path, 2)
}

func parseHello(p []byte) (hello, error) {
	d := decoder{p: p, what: "hello"}
	var h hello
	if m := d.bytes(len(magic)); string(m) != magic {
		return h, protoErrorf("the client's first frame is not a ringcp sync hello")
	}
	h.version = d.u16()
	h.role = role(d.u8())
	flags := d.u8()
	h.create, h.force, h.rawSrc, h.rawDst = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	h.verify = flags&16 != 0
	h.granule = d.u32()
	copy(h.key[:], d.bytes(keyLen))
	h.speeds = d.speeds()
	h.path = d.str(2, maxPath)
	if err := d.done(); err != nil {
		return h, err
	}
	switch {
	case h.version != Version:
		return h, nil // the caller names both versions
	case h.role != roleTarget && h.role != roleSource:
		return h, protoErrorf("hello with role %d", h.role)
	case flags&^31 != 0:
		return h, protoErrorf("hello with unknown flags %#x", flags)
	case h.path == "":
		return h, protoErrorf("hello without a path")
	}
	return h, nil
}

// welcome is the server's answer.
type welcome struct {
	version uint16
	digest  blocksync.Algorithm
	size    int64
	created bool // the server made a new DST
	id      blocksync.Identity
	host    string
}

func (w welcome) encode() []byte {
	b := binary.BigEndian.AppendUint16(nil, w.version)
	var flags byte
	if w.created {
		flags |= 1
	}
	if w.id.Block {
		flags |= 2
	}
	b = append(b, byte(w.digest), flags)
	b = binary.BigEndian.AppendUint64(b, uint64(w.size))
	b = binary.BigEndian.AppendUint64(b, w.id.Rdev)
	b = binary.BigEndian.AppendUint64(b, w.id.Dev)
	b = binary.BigEndian.AppendUint64(b, w.id.Ino)
	b = appendString(b, w.id.Boot, 1)
	return appendString(b, w.host, 1)
}

func parseWelcome(p []byte) (welcome, error) {
	d := decoder{p: p, what: "welcome"}
	var w welcome
	w.version = d.u16()
	w.digest = blocksync.Algorithm(d.u8())
	flags := d.u8()
	w.created, w.id.Block = flags&1 != 0, flags&2 != 0
	w.size = d.size()
	w.id.Rdev, w.id.Dev, w.id.Ino = d.u64(), d.u64(), d.u64()
	w.id.Boot = d.str(1, 255)
	w.host = d.str(1, 255)
	if err := d.done(); err != nil {
		return w, err
	}
	if w.version == Version && !w.digest.Valid() {
		return w, protoErrorf("welcome with digest algorithm %d", w.digest)
	}
	return w, nil
}

// digests is a run of the target's granule digests from first.
func encodeDigests(first int64, ds []blocksync.Digest) [][]byte {
	parts := [][]byte{binary.BigEndian.AppendUint64(nil, uint64(first))}
	for i := range ds {
		parts = append(parts, ds[i][:])
	}
	return parts
}

func parseDigests(p []byte, out []blocksync.Digest) (first int64, ds []blocksync.Digest, err error) {
	d := decoder{p: p, what: "digests"}
	first = d.size()
	rest := len(d.p)
	if d.err == nil && (rest == 0 || rest%digestLen != 0) {
		return 0, nil, protoErrorf("digests frame with %d bytes of digests (want a positive multiple of %d)", rest, digestLen)
	}
	for len(d.p) > 0 && d.err == nil {
		var x blocksync.Digest
		copy(x[:], d.bytes(digestLen))
		out = append(out, x)
	}
	return first, out, d.done()
}

// change is a data or zero frame's range; data frames carry SRC's bytes.
func encodeChange(off, n int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(off)), uint64(n))
}

func parseData(p []byte) (off int64, data []byte, err error) {
	d := decoder{p: p, what: "data"}
	off = d.size()
	data = d.p
	if d.err == nil && len(data) == 0 {
		return 0, nil, protoErrorf("data frame without data")
	}
	d.p = nil
	return off, data, d.done()
}

func parseZero(p []byte) (off, n int64, err error) {
	d := decoder{p: p, what: "zero"}
	off, n = d.size(), d.size()
	if d.err == nil && n == 0 {
		return 0, 0, protoErrorf("zero frame of length 0")
	}
	return off, n, d.done()
}

// u64Frame is a frame holding one count (start: SRC's size; ack: the
// granule through which every change was sent).
func encodeCount(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func parseCount(p []byte, what string) (int64, error) {
	d := decoder{p: p, what: what}
	n := d.size()
	return n, d.done()
}

// end is SRC's whole digest and granule count.
type end struct {
	whole    blocksync.Digest
	granules int64
}

func (e end) encode() []byte {
	return binary.BigEndian.AppendUint64(append([]byte{}, e.whole[:]...), uint64(e.granules))
}

func parseEnd(p []byte) (end, error) {
	d := decoder{p: p, what: "end"}
	var e end
	copy(e.whole[:], d.bytes(digestLen))
	e.granules = d.size()
	return e, d.done()
}

// done is what the target reports once DST is synced.
type done struct {
	whole                             blocksync.Digest
	written, zeroed, dstRead, oldSize int64
	changed                           int64
}

func (x done) encode() []byte {
	b := append([]byte{}, x.whole[:]...)
	for _, v := range []int64{x.written, x.zeroed, x.dstRead, x.oldSize, x.changed} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func parseDone(p []byte) (done, error) {
	d := decoder{p: p, what: "done"}
	var x done
	copy(x.whole[:], d.bytes(digestLen))
	x.written, x.zeroed, x.dstRead, x.oldSize, x.changed = d.size(), d.size(), d.size(), d.size(), d.size()
	return x, d.done()
}

func appendString(b []byte, s string, lenBytes int) []byte {
	if lenBytes == 1 {
		b = append(b, byte(len(s)))
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	}
	return append(b, s...)
}

func appendSpeeds(b []byte, speeds map[blocksync.Algorithm]float64) []byte {
	n := 0
	for _, a := range blocksync.Algorithms {
		if _, ok := speeds[a]; ok {
			n++
		}
	}
	b = append(b, byte(n))
	for _, a := range blocksync.Algorithms {
		if v, ok := speeds[a]; ok {
			b = append(b, byte(a))
			b = binary.BigEndian.AppendUint64(b, uint64(min(max(v, 0), math.MaxInt64/2)))
		}
	}
	return b
}

// decoder reads fields off a payload; the first shortfall sticks in err.
type decoder struct {
	p    []byte
	what string
	err  error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return make([]byte, n)
	}
	if len(d.p) < n {
		d.err = protoErrorf("%s frame too short", d.what)
		return make([]byte, n)
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b
}

func (d *decoder) u8() uint8   { return d.bytes(1)[0] }
func (d *decoder) u16() uint16 { return binary.BigEndian.Uint16(d.bytes(2)) }
func (d *decoder) u32() uint32 { return binary.BigEndian.Uint32(d.bytes(4)) }
func (d *decoder) u64() uint64 { return binary.BigEndian.Uint64(d.bytes(8)) }

// size reads a non-negative int64.
func (d *decoder) size() int64 {
	v := d.u64()
	if v > math.MaxInt64 && d.err == nil {
		d.err = protoErrorf("%s frame with a count of %d, past int64", d.what, v)
	}
	return int64(v & math.MaxInt64)
}

func (d *decoder) str(lenBytes, most int) string {
	var n int
	if lenBytes == 1 {
		n = int(d.u8())
	} else {
		n = int(d.u16())
	}
	if n > most && d.err == nil {
		d.err = protoErrorf("%s frame with a string of %d bytes (at most %d)", d.what, n, most)
		return ""
	}
	return string(d.bytes(n))
}

func (d *decoder) speeds() map[blocksync.Algorithm]float64 {
	n := int(d.u8())
	out := map[blocksync.Algorithm]float64{}
	for range min(n, 16) {
		a := blocksync.Algorithm(d.u8())
		v := d.u64()
		if a.Valid() {
			out[a] = float64(v)
		}
	}
	if n > 16 && d.err == nil {
		d.err = protoErrorf("%s frame with %d digest speeds", d.what, n)
	}
	return out
}

// done fails when the payload had bytes left over.
func (d *decoder) done() error {
	if d.err == nil && len(d.p) > 0 {
		d.err = protoErrorf("%s frame with %d bytes too many", d.what, len(d.p))
	}
	return d.err
}
