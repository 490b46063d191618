package unpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"
	"time"
)

// failingSource gives its bytes, then fails with err (a transport's
// failure, a reset connection).
type failingSource struct {
	r   io.Reader
	err error
}

func (f *failingSource) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

var errTransport = errors.New("connection reset by the test")

// TestSourceErrorPassesThrough: a transport that fails mid-stream is that
// failure, never called corrupt data nor a clean end, in every format.
func TestSourceErrorPassesThrough(t *testing.T) {
	raw := image(1<<20+3, 9)
	for _, pk := range packers {
		if pk.name != "xz-T2-blocks" && pk.name != "xz-T1" && pk.name != "gzip" && pk.name != "pzstd" && pk.name != "zstd" && pk.name != "bzip2" {
			continue
		}
		t.Run(pk.name, func(t *testing.T) {
			need(t, pk.tools...)
			packed := compress(t, raw, pk.cmd)
			src := &failingSource{r: bytes.NewReader(packed[:len(packed)/2]), err: errTransport}
			r, err := NewReader(src, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = io.ReadAll(r)
			if !errors.Is(err, errTransport) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want the transport's error as it is", err)
			}
		})
	}
}

// TestSlowPipe: compressed bytes trickling through a pipe in small
// pieces (a slow producer on stdin) decode whole.
func TestSlowPipe(t *testing.T) {
	need(t, "xz", "zstd")
	raw := image(300_001, 10)
	for _, cmd := range []string{`xz -T2 -0 --block-size=50000 -c "$IN" > "$OUT"`, `zstd -q -c "$IN" > "$OUT"`} {
		packed := compress(t, raw, cmd)
		pr, pw := io.Pipe()
		go func() {
			for off := 0; off < len(packed); off += 7 {
				pw.Write(packed[off:min(off+7, len(packed))])
				if off%10_000 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			pw.Close()
		}()
		got, _, err := unpackAll2(pr)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, cmd, got, raw)
	}
}

func unpackAll2(src io.Reader) ([]byte, *Reader, error) {
	r, err := NewReader(src, Options{Threads: 2})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	return out, r, err
}

// TestCloseMidway: Close while workers and the splitter are busy returns,
// and stops them.
func TestCloseMidway(t *testing.T) {
	need(t, "xz")
	packed := compress(t, image(4<<20, 11), `xz -T2 -0 --block-size=100000 -c "$IN" > "$OUT"`)
	r, err := NewReader(bytes.NewReader(packed), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 150_000)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := r.Read(make([]byte, 10)); err == nil {
		t.Fatal("Read after Close succeeded")
	}
}

// TestHugeDictionary: a block header that asks for a 4 GiB dictionary
// (valid CRC32) is refused, not allocated.
func TestHugeDictionary(t *testing.T) {
	need(t, "xz")
	packed := compress(t, image(5000, 13), `xz -T1 -6 -c "$IN" > "$OUT"`)
	// The first block header follows the 12-byte stream header: size
	// byte, flags, the LZMA2 filter (id 0x21, 1 byte of properties).
	h := packed[12:]
	size := (int(h[0]) + 1) * 4
	flags := h[1]
	i := 2
	if flags&0x40 != 0 || flags&0x80 != 0 {
		t.Skip("xz -T1 wrote sizes in the block header; this test wants the plain header")
	}
	if h[i] != 0x21 || h[i+1] != 1 {
		t.Fatalf("unexpected filter flags %x", h[:size])
	}
	h[i+2] = 40 // 4 GiB - 1
	binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
	_, _, err := unpackAll(packed, Options{Threads: 1})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want a refusal of the dictionary", err)
	}
}
