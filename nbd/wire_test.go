package nbd

import (
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPutRequest(t *testing.T) {
	var b [requestHeaderLen]byte
	putRequest(b[:], request{flags: cmdFlagFUA, cmd: cmdWrite, cookie: 0x0102030405060708, off: 1 << 40, length: 4097})
	want := "25609513" + "0001" + "0001" + "0102030405060708" + "0000010000000000" + "00001001"
	if got := hex.EncodeToString(b[:]); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestOptionEncoding(t *testing.T) {
	got := hex.EncodeToString(appendOption(nil, optGo, goData("ab", infoBlockSize)))
	want := "49484156454f5054" + "00000007" + "0000000a" + "00000002" + "6162" + "0001" + "0003"
	if got != want {
		t.Fatalf("NBD_OPT_GO:\n got %s\nwant %s", got, want)
	}
	got = hex.EncodeToString(metaData("", metaContextAllocation))
	want = "00000000" + "00000001" + "0000000f" + hex.EncodeToString([]byte("base:allocation"))
	if got != want {
		t.Fatalf("NBD_OPT_SET_META_CONTEXT:\n got %s\nwant %s", got, want)
	}
}

func TestParseInfo(t *testing.T) {
	var ei exportInfo
	var bs BlockSize
	got, err := parseInfo(mustHex("0000"+"0000000000100000"+"014d"), &ei, &bs)
	if err != nil || !got || ei.size != 1<<20 || ei.flags != 0x14d {
		t.Fatalf("export: %v %v %+v", got, err, ei)
	}
	if _, err := parseInfo(mustHex("0003"+"00000200"+"00001000"+"02000000"), &ei, &bs); err != nil ||
		bs != (BlockSize{512, 4096, 32 << 20, true}) {
		t.Fatalf("block size: %v %+v", err, bs)
	}
	if _, err := parseInfo(mustHex("0002"+"6869"), &ei, &bs); err != nil {
		t.Fatalf("an unknown info type must be ignored: %v", err)
	}
	for _, bad := range []string{"00", "0000" + "00", "0003" + "00000200", "0003" + "00000300" + "00001000" + "00100000",
		"0003" + "00000200" + "00000100" + "00100000", "0003" + "00000200" + "00001000" + "00000800",
		"0003" + "00020000" + "00020000" + "00100000"} {
		if _, err := parseInfo(mustHex(bad), &ei, &bs); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want a protocol error", bad, err)
		}
	}
}

func TestEffectiveBlockSize(t *testing.T) {
	cases := []struct{ in, want BlockSize }{
		{BlockSize{}, BlockSize{1, 4096, 32 << 20, false}},
		{BlockSize{512, 4096, 0xffffffff, true}, BlockSize{512, 4096, 32 << 20, true}},
		{BlockSize{4096, 4096, 65536 + 100, true}, BlockSize{4096, 4096, 65536, true}},
	}
	for _, tc := range cases {
		if got := tc.in.effective(); got != tc.want {
			t.Errorf("%+v: got %+v want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseErrorChunk(t *testing.T) {
	e, err := parseErrorChunk(chunkError, errChunk(5, "bad"))
	if err != nil || e.errno != 5 || e.msg != "bad" || e.hasOffset {
		t.Fatalf("ERROR: %+v %v", e, err)
	}
	e, err = parseErrorChunk(chunkErrorOffset, errChunk(28, "", 4096))
	if err != nil || e.errno != 28 || !e.hasOffset || e.off != 4096 {
		t.Fatalf("ERROR_OFFSET: %+v %v", e, err)
	}
	for name, p := range map[string][]byte{
		"short":              {0, 0, 0, 5},
		"errno 0":            errChunk(0, "x"),
		"message too long":   errChunk(5, "abc")[:8],
		"offset missing":     errChunk(5, "abc"),
		"offset with extras": append(errChunk(5, "", 1), 0),
	} {
		typ := uint16(chunkError)
		if strings.HasPrefix(name, "offset") {
			typ = chunkErrorOffset
		}
		if _, err := parseErrorChunk(typ, p); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
}

func TestParseBlockStatus(t *testing.T) {
	p := mustHex("00000009" + "00001000" + "00000003" + "00100000" + "00000000")
	id, ext, err := parseBlockStatus(p, 8192)
	if err != nil || id != 9 || len(ext) != 2 || ext[0] != (statusExtent{4096, 3}) || ext[1] != (statusExtent{1 << 20, 0}) {
		t.Fatalf("got %d %+v %v (the last extent may reach past the request)", id, ext, err)
	}
	for name, bad := range map[string]string{
		"no extent":          "00000009",
		"ragged":             "00000009" + "00001000",
		"zero length":        "00000009" + "00000000" + "00000000",
		"past the request":   "00000009" + "00002000" + "00000000" + "00001000" + "00000000",
		"exactly at the end": "00000009" + "00002000" + "00000000" + "00000001" + "00000000",
	} {
		if _, _, err := parseBlockStatus(mustHex(bad), 8192); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		off, n, reqOff uint64
		reqLen         uint32
		want           bool
	}{
		{100, 10, 100, 10, true}, {99, 1, 100, 10, false}, {100, 11, 100, 10, false},
		{109, 1, 100, 10, true}, {110, 1, 100, 10, false}, {110, 0, 100, 10, true},
		{1<<64 - 1, 2, 100, 10, false}, {100, 1<<64 - 1, 100, 10, false},
	}
	for _, tc := range cases {
		if got := within(tc.off, tc.n, tc.reqOff, tc.reqLen); got != tc.want {
			t.Errorf("%+v: got %v", tc, got)
		}
	}
}

func TestCoverage(t *testing.T) {
	var c coverage
	steps := []struct {
		off, n uint64
		ok     bool
	}{
		{100, 50, true}, {0, 10, true}, {10, 90, true}, {150, 1, true}, {149, 1, false}, {0, 1, false},
		{200, 10, true}, {190, 11, false}, {151, 49, true}, {300, 0, true}, {5, 1, false},
	}
	for _, s := range steps {
		if got := c.add(s.off, s.n); got != s.ok {
			t.Fatalf("add(%d, %d) = %v after %v", s.off, s.n, got, c.spans)
		}
	}
	if c.total != 210 || len(c.spans) != 1 || c.spans[0] != [2]uint64{0, 210} {
		t.Fatalf("total %d spans %v", c.total, c.spans)
	}
}

func TestErrnoFromWire(t *testing.T) {
	want := map[uint32]syscall.Errno{1: syscall.EPERM, 5: syscall.EIO, 12: syscall.ENOMEM, 22: syscall.EINVAL,
		28: syscall.ENOSPC, 75: syscall.EOVERFLOW, 95: syscall.EOPNOTSUPP, 108: syscall.ESHUTDOWN, 2: syscall.EINVAL, 1000: syscall.EINVAL}
	for v, e := range want {
		if got := errnoFromWire(v); got != e {
			t.Errorf("%d: got %v want %v", v, got, e)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	err := error(&Error{Op: "write", URI: "nbd://h/x", Offset: 4096, Length: 512, Errno: syscall.ENOSPC, Msg: "full"})
	want := "nbd write nbd://h/x at offset 4096 length 512: no space left on device (ENOSPC): server says: full"
	if err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %q", err)
	}
	err = &Error{Op: "read", URI: "u", Errno: syscall.EPROTO, Err: protoErrorf("bad")}
	if !errors.Is(err, ErrProtocol) || !errors.Is(err, syscall.EPROTO) {
		t.Fatalf("%v does not unwrap", err)
	}
}

// Reap: waits for atLeast, refuses to wait for more than can come, and
// honours its timeout.
func TestQueue(t *testing.T) {
	q := newQueue()
	out := make([]Completion, 4)
	if n, err := q.reap(out, 1, 0); n != 0 || err == nil {
		t.Fatalf("reap with nothing in flight: %d %v, want an error at once", n, err)
	}
	q.submitted()
	q.submitted()
	go func() {
		time.Sleep(10 * time.Millisecond)
		q.push(Completion{Tag: 1})
		q.push(Completion{Tag: 2})
	}()
	if n, err := q.reap(out, 2, 0); n != 2 || err != nil || out[0].Tag != 1 || out[1].Tag != 2 {
		t.Fatalf("reap 2: %d %v %+v", n, err, out[:2])
	}
	q.submitted()
	if n, err := q.reap(out, 1, 20*time.Millisecond); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("reap with a timeout: %d %v", n, err)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
