package syncproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
)

// frame builds a well-formed frame.
func frame(t frameType, payload []byte) []byte {
	var b bytes.Buffer
	fw := newFrameWriter(&b)
	if err := fw.write(t, payload); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// FuzzFrames feeds arbitrary bytes to the frame reader, and each frame it
// accepts to its message's parser. Whatever comes, nothing panics, no
// payload is larger than its type allows, every error is a protocol
// error or the stream's end, and what parses encodes back to itself.
// The seeds run in every go test.
func FuzzFrames(f *testing.F) {
	h := hello{version: Version, role: roleTarget, granule: 65536, path: "/dev/vdb",
		speeds: map[blocksync.Algorithm]float64{blocksync.SHA256: 2e9}}
	w := welcome{version: Version, digest: blocksync.BLAKE2b256, size: 1 << 30, id: blocksync.Identity{Boot: "b", Dev: 3, Ino: 4}, host: "h"}
	seeds := [][]byte{
		frame(tHello, h.encode()), frame(tWelcome, w.encode()), frame(tStart, encodeCount(4097)),
		frame(tDigests, bytes.Join(encodeDigests(2, make([]blocksync.Digest, 3)), nil)),
		frame(tAck, encodeCount(5)), frame(tData, append(encodeCount(65536), 1, 2, 3)),
		frame(tZero, encodeChange(0, 65536)), frame(tEnd, end{granules: 9}.encode()),
		frame(tDone, done{written: 1}.encode()), frame(tError, encodeError(&blocksync.OpError{Op: "write", Path: "/x", Offset: 7, Err: io.ErrShortWrite})),
		append(frame(tAck, encodeCount(1)), frame(tAck, encodeCount(2))...),
		{1, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}, {99, 0, 0, 0, 0, 0, 0, 0}, frame(tStart, nil)[:10],
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		fr := newFrameReader(bytes.NewReader(stream))
		for {
			typ, p, err := fr.next()
			if err != nil {
				if !errors.Is(err, ErrProtocol) && err != io.EOF && err != io.ErrUnexpectedEOF {
					t.Fatalf("error %v is neither a protocol error nor the stream's end", err)
				}
				return
			}
			if len(p) > maxPayload[typ] {
				t.Fatalf("%v payload of %d bytes", typ, len(p))
			}
			if err := roundTrip(typ, p); err != nil && !errors.Is(err, ErrProtocol) {
				t.Fatalf("%v: %v", typ, err)
			}
		}
	})
}

// roundTrip parses a payload and, when it parses, checks that encoding
// it again gives the same bytes (for the messages whose encoding is
// canonical).
func roundTrip(typ frameType, p []byte) error {
	var again []byte
	switch typ {
	case tHello:
		h, err := parseHello(p)
		if err != nil {
			return err
		}
		if h.version == Version && len(h.speeds) == int(p[len(magic)+8+keyLen]) {
			again = h.encode()
		}
	case tWelcome:
		w, err := parseWelcome(p)
		if err != nil {
			return err
		}
		if p[3]&^3 == 0 {
			again = w.encode()
		}
	case tDigests:
		first, ds, err := parseDigests(p, nil)
		if err != nil {
			return err
		}
		again = bytes.Join(encodeDigests(first, ds), nil)
	case tData:
		off, data, err := parseData(p)
		if err != nil {
			return err
		}
		again = append(encodeCount(off), data...)
	case tZero:
		off, n, err := parseZero(p)
		if err != nil {
			return err
		}
		again = encodeChange(off, n)
	case tStart, tAck:
		n, err := parseCount(p, typ.String())
		if err != nil {
			return err
		}
		again = encodeCount(n)
	case tEnd:
		e, err := parseEnd(p)
		if err != nil {
			return err
		}
		again = e.encode()
	case tDone:
		d, err := parseDone(p)
		if err != nil {
			return err
		}
		again = d.encode()
	case tError:
		_, err := parseError(p)
		return err
	}
	if again != nil && !bytes.Equal(again, p) {
		return errors.New("parses but encodes differently")
	}
	return nil
}

// A frame whose header claims more than its type allows is refused from
// the header, before any payload is read or allocated; a bad checksum or
// reserved byte is refused too.
func TestFrameBounds(t *testing.T) {
	var hdr [headerLen]byte
	hdr[0] = byte(tData)
	binary.BigEndian.PutUint32(hdr[4:], uint32(maxPayload[tData]+1))
	_, _, err := newFrameReader(bytes.NewReader(hdr[:])).next()
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("oversized data frame: %v", err)
	}
	good := frame(tAck, encodeCount(3))
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	if _, _, err := newFrameReader(bytes.NewReader(bad)).next(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad checksum: %v", err)
	}
	bad = bytes.Clone(good)
	bad[2] = 1
	binary.BigEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(bad[:len(bad)-4], castagnoli))
	if _, _, err := newFrameReader(bytes.NewReader(bad)).next(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("reserved byte: %v", err)
	}
	if err := newFrameWriter(io.Discard).write(tAck, make([]byte, 9)); err == nil {
		t.Fatal("an oversized frame was written")
	}
}

// Errors cross the wire as the same types, naming op, path, offset and
// errno.
func TestErrorFrames(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&blocksync.OpError{Op: "write", Path: "/dev/sdb", Offset: 4096, Err: syscall.EIO}, "write /dev/sdb at offset 4096: input/output error"},
		{&blocksync.RefusedError{Kind: blocksync.KindMounted, Path: "/dev/sdb", Reason: "mounted on /"}, "/dev/sdb: mounted on /"},
		{&MismatchError{Msg: "differs"}, "differs"},
		{protoErrorf("bad"), "broke the protocol"},
		{&copier.SrcChangedError{Path: "/a.img", What: "SRC /a.img", Why: "it was modified"}, "SRC /a.img changed while it was read (it was modified)"},
	} {
		got, err := parseError(encodeError(c.err))
		if err != nil || got.Error() == "" || !bytes.Contains([]byte(got.Error()), []byte(c.want)) {
			t.Errorf("%v came back as %v (%v)", c.err, got, err)
		}
		var sc *copier.SrcChangedError
		if errors.As(c.err, &sc) && (!errors.As(got, &sc) || sc.Path != "/a.img") {
			t.Errorf("%v came back as %#v: want a *copier.SrcChangedError naming its file", c.err, got)
		}
		if errnoOf(got) != errnoOf(c.err) {
			t.Errorf("%v: errno %v, want %v", c.err, errnoOf(got), errnoOf(c.err))
		}
	}
}
