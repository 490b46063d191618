package syncproto

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	go hostileSource(server, g, size, 1, func() bool {
		// The refusal waits for the granule to be in DST: the
		// applier writes it on a worker of its own.
		b, err := os.ReadFile(dstPath)
		return err == nil && b[0] == 0xaa
	})
	dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	r, err := Pull(context.Background(), client, "src", dst, Options{Granule: g})
	if !bytes.Equal(mustRead(t, dstPath)[:g], bytes.Repeat([]byte{0xaa}, g)) {
		t.Fatalf("the hostile source's granule was not applied (%+v, %v): the test proves nothing", r, err)
	}
	var ref *blocksync.RefusedError
	if err == nil || errors.As(err, &ref) {
		t.Fatalf("a refusal after DST was written: %v (%T), want a failure that is no *RefusedError", err, err)
	}
}

// A refusal that comes right behind the changes, while the applier's
// workers may still be writing them, is no refusal either: DST may hold
// any of them. The changes were counted only once written and folded,
// so a pull stopped by the refusal before that returned the
// *RefusedError (ringcp exited 2, "DST was not changed") over a DST its
// workers had written, or were writing.
func TestRefusalBehindChangesInFlight(t *testing.T) {
	const g, size = 4096, 16 * 4096
	for i := range 20 {
		dstPath := filepath.Join(t.TempDir(), "dst")
		synctest.WriteFile(t, dstPath, make([]byte, size))
		client, server := pipes()
		go hostileSource(server, g, size, 16, nil)
		dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Pull(context.Background(), client, "src", dst, Options{Granule: g})
		dst.Close()
		server.Close()
		var ref *blocksync.RefusedError
		if err == nil || errors.As(err, &ref) {
			t.Fatalf("run %d: a refusal behind 16 changes sent to DST: %v (%T, %d granules changed), want a failure that is no *RefusedError",
				i, err, err, r.Changed)
		}
	}
}

// hostileSource serves a pull: k changed granules, then (once applied
// says so, when not nil) a refusal.
func hostileSource(conn *pipeConn, g, size int64, k int, applied func() bool) {
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
	for i := range int64(k) {
		fw.write(tData, encodeCount(i*g), bytes.Repeat([]byte{0xaa}, int(g)))
	}
	for deadline := time.Now().Add(10 * time.Second); applied != nil && !applied() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fw.write(tError, encodeError(&blocksync.RefusedError{Kind: blocksync.KindChanged, Path: "src", Reason: "refused, it says"}))
	for {
		if _, _, err := fr.next(); err != nil {
			return
		}
	}
}
