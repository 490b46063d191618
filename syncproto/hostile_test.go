package syncproto

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
)

// zeroSource is a SRC of zeros whose reads wait until release is closed
// or two seconds passed (a slow disk: the source acknowledges nothing
// meanwhile).
type zeroSource struct {
	size    int64
	release chan struct{}
}

func (z zeroSource) ReadAt(p []byte, off int64) (int, error) {
	select {
	case <-z.release:
	case <-time.After(2 * time.Second):
	}
	clear(p)
	return len(p), nil
}
func (z zeroSource) Size() int64  { return z.size }
func (z zeroSource) Name() string { return "zeros" }

// A target that breaks the protocol ends the source's side with
// ErrProtocol, promptly: it cannot make the source hang, hold more
// digests than the bound, or take its done for the real one.
func TestHostileTarget(t *testing.T) {
	const g = 512
	for _, c := range []struct {
		name  string
		act   func(fw *frameWriter)
		want  string
		block bool // SRC's reads wait: the source acknowledges nothing
	}{
		{"done before end", func(fw *frameWriter) {
			fw.write(tDone, done{}.encode())
		}, "done before the end frame", false},
		{"digests out of order", func(fw *frameWriter) {
			fw.write(tDigests, encodeDigests(5, make([]blocksync.Digest, 1))...)
		}, "from granule 5 where granule 0 was due", false},
		{"flood", func(fw *frameWriter) {
			for first := int64(0); first <= maxAhead; first += maxDigests {
				if fw.write(tDigests, encodeDigests(first, make([]blocksync.Digest, maxDigests))...) != nil {
					return
				}
			}
		}, "granules ahead", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, server := pipes()
			go func() {
				fr, fw := newFrameReader(server), newFrameWriter(server)
				defer server.Close()
				if _, err := expectFrame(fr, tHello); err != nil {
					return
				}
				fw.write(tWelcome, welcome{version: Version, digest: blocksync.SHA256, host: "hostile"}.encode())
				if _, err := expectFrame(fr, tStart); err != nil {
					return
				}
				go func() { // keep reading, as a live peer does
					for {
						if _, _, err := fr.next(); err != nil {
							return
						}
					}
				}()
				c.act(fw)
				time.Sleep(10 * time.Second)
			}()
			src := zeroSource{size: 2 * maxAhead * g, release: make(chan struct{})}
			if !c.block {
				close(src.release)
			} else {
				defer close(src.release)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Push(context.Background(), client, src, "/x", Options{Granule: g, Digest: blocksync.SHA256})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v, want a protocol error with %q", err, c.want)
				}
			case <-time.After(8 * time.Second):
				t.Fatal("the source hangs")
			}
		})
	}
}

// expectFrame reads frames until one of type want.
func expectFrame(fr *frameReader, want frameType) ([]byte, error) {
	for {
		typ, p, err := fr.next()
		if err != nil {
			return nil, err
		}
		if typ == want {
			return p, nil
		}
	}
}

// A source that breaks the protocol ends the server's side with
// ErrProtocol before it writes anything it should not: no change off
// the granule grid, past SRC's end, back over a settled granule, and no
// done for an end that comes too early.
func TestHostileSource(t *testing.T) {
	const g, size = 4096, 64 * 4096
	for _, c := range []struct {
		name string
		act  func(fw *frameWriter)
		want string
	}{
		{"unaligned", func(fw *frameWriter) { fw.write(tData, encodeCount(1), make([]byte, g)) }, "not whole granules"},
		{"short", func(fw *frameWriter) { fw.write(tData, encodeCount(0), make([]byte, g-1)) }, "not whole granules"},
		{"past the end", func(fw *frameWriter) { fw.write(tZero, encodeChange(size, g)) }, "past SRC's end"},
		{"back over", func(fw *frameWriter) {
			fw.write(tData, encodeCount(8*g), make([]byte, g))
			fw.write(tData, encodeCount(2*g), make([]byte, g))
		}, "after granule 9 was settled"},
		{"ack too far", func(fw *frameWriter) { fw.write(tAck, encodeCount(1<<40)) }, "ack through granule"},
		{"end miscounted", func(fw *frameWriter) { fw.write(tEnd, end{granules: 3}.encode()) }, "end after 3 granules"},
		{"unknown frame", func(fw *frameWriter) { fw.write(tWelcome, welcome{version: 1, digest: 1}.encode()) }, "a welcome frame from the source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dstPath := t.TempDir() + "/dst"
			client, server := pipes()
			sv := serve(t, server, ServeOptions{})
			fr, fw := newFrameReader(client), newFrameWriter(client)
			h := hello{version: Version, role: roleTarget, create: true, granule: g, path: dstPath,
				speeds: map[blocksync.Algorithm]float64{blocksync.BLAKE2b256: 1}}
			fw.write(tHello, h.encode())
			if _, err := expectFrame(fr, tWelcome); err != nil {
				t.Fatal(err)
			}
			fw.write(tStart, encodeCount(size))
			if _, err := expectFrame(fr, tDigests); err != nil { // all 64, in one frame
				t.Fatal(err)
			}
			go func() {
				for {
					if _, _, err := fr.next(); err != nil {
						return
					}
				}
			}()
			c.act(fw)
			_, err := sv.wait(t)
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("server: %v, want a protocol error with %q", err, c.want)
			}
			if _, err := os.Stat(dstPath); !os.IsNotExist(err) {
				t.Fatalf("DST named after a broken session: %v", err)
			}
		})
	}
}
