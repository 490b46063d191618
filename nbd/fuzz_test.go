package nbd

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReply feeds arbitrary bytes to the reply decoder as the server's
// stream, with four requests in flight. Whatever comes, the decoder must
// not panic or write outside a buffer (Go's bounds checks would panic),
// must end with an error or EOF, a read it calls successful must have
// had every byte described, and a successful block status must carry
// extents for every context selected (base:allocation as id 9, and a
// dirty bitmap as id 11 when bitmap is set). The seeds run in every go
// test.
func FuzzReply(f *testing.F) {
	for _, s := range replySeeds() {
		f.Add(s, true, false)
		f.Add(s, true, true)
	}
	f.Add(append(be.AppendUint32(be.AppendUint32(nil, magicSimple), 0), be.AppendUint64(nil, 4)...), false, false)
	f.Fuzz(func(t *testing.T, stream []byte, structured, bitmap bool) {
		pend := fuzzRequests()
		ctx := contextIDs{id: [numContexts]uint32{9, 11}, has: [numContexts]bool{true, bitmap}}
		d := decoder{r: bufio.NewReader(bytes.NewReader(stream)), structured: structured, contexts: ctx,
			find: func(c uint64) *wreq { return pend[c] }}
		for i := 0; ; i++ {
			if i > len(stream) {
				t.Fatal("more messages than bytes: the decoder does not consume its input")
			}
			w, err := d.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrProtocol) {
					t.Fatalf("error %v wraps neither io.EOF nor ErrProtocol", err)
				}
				return
			}
			if w == nil {
				continue
			}
			delete(pend, w.cookie)
			if w.errno == 0 && w.cmd == cmdRead && w.cover.total != uint64(w.length) {
				t.Fatalf("read %d successful with %d of %d bytes", w.cookie, w.cover.total, w.length)
			}
			for k, has := range ctx.has {
				if has && w.errno == 0 && w.cmd == cmdBlockStatus && len(w.status[k]) == 0 {
					t.Fatalf("block status %d successful without extents for context %d", w.cookie, k)
				}
			}
		}
	})
}

// fuzzRequests: a read of 4096 at 8192, a write, a block status of 1 MiB,
// a read of 100 at 0.
func fuzzRequests() map[uint64]*wreq {
	return map[uint64]*wreq{
		1: {cookie: 1, cmd: cmdRead, off: 8192, length: 4096, buf: make([]byte, 4096)},
		2: {cookie: 2, cmd: cmdWrite, off: 0, length: 512},
		3: {cookie: 3, cmd: cmdBlockStatus, off: 0, length: 1 << 20},
		4: {cookie: 4, cmd: cmdRead, off: 0, length: 100, buf: make([]byte, 100)},
	}
}

// replySeeds are well-formed and subtly broken streams.
func replySeeds() [][]byte {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	chunk := func(flags, typ uint16, cookie uint64, p []byte) []byte {
		return append(chunkBytes(flags, typ, cookie, uint32(len(p))), p...)
	}
	simple := func(cookie uint64, errno uint32) []byte {
		return be.AppendUint64(be.AppendUint32(be.AppendUint32(nil, magicSimple), errno), cookie)
	}
	status := cat(be.AppendUint32(nil, 9), be.AppendUint32(nil, 4096), be.AppendUint32(nil, 3),
		be.AppendUint32(nil, 1<<20), be.AppendUint32(nil, 0))
	dirty := cat(be.AppendUint32(nil, 11), be.AppendUint32(nil, 65536), be.AppendUint32(nil, 0),
		be.AppendUint32(nil, 2<<20), be.AppendUint32(nil, stateDirty))
	return [][]byte{
		cat(chunk(0, chunkOffsetData, 1, dataChunk(8192, make([]byte, 4000))),
			chunk(0, chunkOffsetHole, 1, holeChunk(12192, 96)),
			chunk(replyFlagDone, chunkNone, 1, nil)),
		cat(simple(2, 0), chunk(replyFlagDone, chunkBlockStatus, 3, status)),
		cat(chunk(0, chunkBlockStatus, 3, dirty), chunk(replyFlagDone, chunkBlockStatus, 3, status)),
		cat(chunk(0, chunkBlockStatus, 3, dirty), chunk(0, chunkBlockStatus, 3, dirty), chunk(replyFlagDone, chunkNone, 3, nil)),
		cat(chunk(replyFlagDone, chunkError, 4, errChunk(5, "bad sector")), simple(2, 28)),
		chunk(replyFlagDone, chunkErrorOffset, 1, errChunk(5, "x", 8200)),
		chunk(replyFlagDone, chunkOffsetData, 4, dataChunk(0, make([]byte, 100))),
		chunk(replyFlagDone, chunkOffsetData, 4, dataChunk(0, make([]byte, 50))),
		chunk(replyFlagDone, chunkOffsetData, 4, dataChunk(1, make([]byte, 100))),
		cat(chunk(0, chunkOffsetHole, 4, holeChunk(0, 60)), chunk(replyFlagDone, chunkOffsetHole, 4, holeChunk(50, 50))),
		chunk(replyFlagDone, chunkFlagError|77, 2, errChunk(1, "odd")),
		chunk(replyFlagDone, chunkBlockStatus, 3, status[:12]),
		chunkBytes(replyFlagDone, chunkOffsetData, 1, 1<<31),
		[]byte{0x67, 0x44, 0x66},
	}
}
