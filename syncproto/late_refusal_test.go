package syncproto

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A refusal means nothing was written (ringcp exits 2, and does not warn
// that DST holds a mix). A peer that sends one after changes were
// applied to this host's DST is not refusing: the pull failed, DST is a
// mix of old and new granules, and the error must not pass for a
// refusal. It did: a hostile or broken SRC host sent a granule, then a
// refusal, and ringcp exited 2 over a DST it had changed.
func TestLateRefusalIsAFailure(t *testing.T) {
	const g, size = 4096, 16 * 4096
	dstPath := filepath.Join(t.TempDir(), "dst")
	synctest.WriteFile(t, dstPath, make([]byte, size))
	client, server := pipes()
	defer server.Close()
	go hostileSource(server, g, size)
	dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	r, err := Pull(context.Background(), client, "src", dst, Options{Granule: g})
	// Changes are applied several at once: the refusal may stop the
	// granule's write before it starts, or not. Either way it was
	// accepted, and DST may hold it.
	if r.Stats.Changed == 0 && !bytes.Equal(mustRead(t, dstPath)[:g], bytes.Repeat([]byte{0xaa}, g)) {
		t.Fatalf("the hostile source's granule was neither accepted nor applied (%+v, %v): the test proves nothing", r, err)
	}
	var ref *blocksync.RefusedError
	if err == nil || errors.As(err, &ref) {
		t.Fatalf("a refusal after DST was written: %v (%T), want a failure that is no *RefusedError", err, err)
	}
}

// hostileSource serves a pull: one changed granule, then a refusal.
func hostileSource(conn *pipeConn, g, size int64) {
	fr, fw := newFrameReader(conn), newFrameWriter(conn)
	if _, err := expectFrame(fr, tHello); err != nil {
		return
	}
	fw.write(tWelcome, welcome{version: Version, digest: blocksync.BLAKE2b256, size: size,
		id: blocksync.Identity{Boot: "elsewhere"}, host: "hostile"}.encode())
	fw.write(tStart, encodeCount(size))
	if _, err := expectFrame(fr, tDigests); err != nil {
		return
	}
	fw.write(tData, encodeCount(0), bytes.Repeat([]byte{0xaa}, int(g)))
	fw.write(tError, encodeError(&blocksync.RefusedError{Kind: blocksync.KindChanged, Path: "src", Reason: "refused, it says"}))
	for {
		if _, _, err := fr.next(); err != nil {
			return
		}
	}
}
