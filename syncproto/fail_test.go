package syncproto

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/synctest"
)

// asRefusal finds the refusal in a sync's error, local or the peer's.
func asRefusal(t *testing.T, err error, kind blocksync.Kind, want string) {
	t.Helper()
	var re *blocksync.RefusedError
	if !errors.As(err, &re) || re.Kind != kind || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v (%T), want a %s refusal saying %q", err, err, kind, want)
	}
}

// What the serving side refuses, before writing anything, the client
// reports as the same refusal (the command exits 2 on it).
func TestServeRefuses(t *testing.T) {
	d := t.TempDir()
	srcPath := filepath.Join(d, "src")
	synctest.WriteFile(t, srcPath, synctest.Random(1, 1<<20+3))
	t.Run("missing DST", func(t *testing.T) {
		_, _, cerr, serr := push(t, context.Background(), srcPath, filepath.Join(d, "nope"), Options{})
		asRefusal(t, cerr, blocksync.KindNotFound, "in-process server: "+filepath.Join(d, "nope")+": DST does not exist")
		asRefusal(t, serr, blocksync.KindNotFound, "DST does not exist")
	})
	t.Run("missing SRC", func(t *testing.T) {
		_, _, cerr, _ := pull(t, context.Background(), filepath.Join(d, "nope"), filepath.Join(d, "dst0"), blocksync.TargetOptions{Create: true}, Options{})
		asRefusal(t, cerr, blocksync.KindNotFound, "SRC does not exist")
	})
	t.Run("device too small", func(t *testing.T) {
		dev, _ := blocktest.Device(t, 1<<20)
		old := readAll(t, dev)
		_, _, cerr, _ := push(t, context.Background(), srcPath, dev, Options{})
		asRefusal(t, cerr, blocksync.KindTooSmall, "less than SRC's")
		synctest.SameBytes(t, dev, readAll(t, dev), old)
	})
	t.Run("mounted device", func(t *testing.T) {
		dev, _ := blocktest.Device(t, 64<<20)
		blocktest.Mkfs(t, dev, "ext4")
		blocktest.Mount(t, dev, "ext4", 0)
		_, _, cerr, _ := push(t, context.Background(), srcPath, dev, Options{Force: true})
		asRefusal(t, cerr, blocksync.KindMounted, "mounted")
	})
	t.Run("the same bytes", func(t *testing.T) {
		// Where locks do not catch it (NFS takes none), the identity
		// does: a SRC that says it is the peer's DST is refused
		// before the peer writes.
		dstPath := filepath.Join(d, "dst")
		old := synctest.Random(2, 1<<20)
		synctest.WriteFile(t, dstPath, old)
		f, err := blocksync.OpenSource(dstPath)
		if err != nil {
			t.Fatal(err)
		}
		id := f.Identity()
		f.Close()
		src, err := blocksync.OpenSource(srcPath)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		c, s := pipes()
		sv := serve(t, s, ServeOptions{})
		_, err = Push(context.Background(), c, sameAs{src, id}, dstPath, Options{})
		asRefusal(t, err, blocksync.KindOverlap, "same bytes")
		sv.wait(t)
		synctest.Same(t, dstPath, old)
	})
}

// sameAs is a SRC claiming another identity.
type sameAs struct {
	*blocksync.File
	id blocksync.Identity
}

func (s sameAs) Identity() blocksync.Identity { return s.id }

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A missing remote DST is made only with Create, under a hidden name,
// and named only once complete: a sync that fails leaves nothing.
func TestPushCreates(t *testing.T) {
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "new")
	want := synctest.Random(3, 3<<20+4097)
	synctest.WriteFile(t, srcPath, want)
	cl, sv, cerr, serr := push(t, context.Background(), srcPath, dstPath, Options{Create: true})
	if cerr != nil || serr != nil || !cl.Created || !sv.Created || cl.Written != int64(len(want)) {
		t.Fatalf("client %+v %v; server %+v %v", cl, cerr, sv, serr)
	}
	synctest.Same(t, dstPath, want)
}

// I/O errors on the peer's end come back with op, path, offset and
// errno; nothing is claimed synced.
func TestPeerIOErrors(t *testing.T) {
	const size, faultAt = 8 << 20, 5<<20 + 100
	back := t.TempDir()
	fs := faultfs.Mount(t, back,
		faultfs.Fault{Op: faultfs.OpWrite, Offset: faultAt, Errno: syscall.EIO, Name: "dst"},
		faultfs.Fault{Op: faultfs.OpRead, Offset: faultAt, Errno: syscall.EIO, Name: "src"})
	local := t.TempDir()
	synctest.WriteFile(t, filepath.Join(local, "src"), synctest.Random(4, size))
	synctest.WriteFile(t, filepath.Join(back, "dst"), synctest.Random(5, size))
	synctest.WriteFile(t, filepath.Join(back, "src"), synctest.Random(6, size))
	check := func(t *testing.T, err error, op, path string) {
		t.Helper()
		var oe *blocksync.OpError
		var re *RemoteError
		if !errors.As(err, &re) || !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) || oe.Op != op || oe.Path != path ||
			oe.Offset > faultAt || oe.Offset+faultfs.MaxRequest <= faultAt {
			t.Fatalf("got %v; want the peer's %s error on %s near offset %d", err, op, path, faultAt)
		}
	}
	t.Run("write", func(t *testing.T) {
		_, _, cerr, _ := push(t, context.Background(), filepath.Join(local, "src"), fs.Path("dst"), Options{})
		check(t, cerr, "write", fs.Path("dst"))
	})
	t.Run("read", func(t *testing.T) {
		_, _, cerr, _ := pull(t, context.Background(), fs.Path("src"), filepath.Join(local, "dst"), blocksync.TargetOptions{Create: true}, Options{})
		check(t, cerr, "read", fs.Path("src"))
		if _, err := os.Stat(filepath.Join(local, "dst")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a failed pull left DST: %v", err)
		}
	})
}

// lossy drops one write silently: the end-to-end digest must notice.
type lossy struct {
	*blocksync.File
	at int64
}

func (l lossy) WriteAt(p []byte, off int64) (int, error) {
	if off <= l.at && l.at < off+int64(len(p)) {
		return len(p), nil
	}
	return l.File.WriteAt(p, off)
}

func TestLostWriteIsAMismatch(t *testing.T) {
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
	synctest.WriteFile(t, srcPath, synctest.Random(7, 4<<20))
	synctest.WriteFile(t, dstPath, synctest.Random(8, 4<<20))
	dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{})
	_, err = Pull(context.Background(), c, srcPath, lossy{dst, 3 << 20}, Options{})
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MismatchError", err)
	}
	_, serr := sv.wait(t)
	if !errors.As(serr, &me) {
		t.Fatalf("server: %v, want the mismatch relayed", serr)
	}
}

// corrupter flips one bit of the stream the client sends, at byte at.
type corrupter struct {
	*pipeConn
	at, pos int64
}

func (c *corrupter) Write(p []byte) (int, error) {
	if c.pos <= c.at && c.at < c.pos+int64(len(p)) {
		q := bytes.Clone(p)
		q[c.at-c.pos] ^= 0x10
		p = q
	}
	c.pos += int64(len(p))
	return c.pipeConn.Write(p)
}

// A stream damaged in transit fails its frame's checksum: the session
// ends with ErrProtocol on both sides and a new DST is never named.
func TestCorruptStream(t *testing.T) {
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "new")
	synctest.WriteFile(t, srcPath, synctest.Random(9, 2<<20))
	src, err := blocksync.OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{})
	_, err = Push(context.Background(), &corrupter{pipeConn: c, at: 1 << 20}, src, dstPath, Options{Create: true})
	_, serr := sv.wait(t)
	if !errors.Is(serr, ErrProtocol) || !strings.Contains(serr.Error(), "checksum") || !errors.Is(err, ErrProtocol) {
		t.Fatalf("client: %v\nserver: %v", err, serr)
	}
	if left, _ := filepath.Glob(filepath.Join(d, "*new*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A peer of another protocol version is refused at the handshake,
// naming both versions.
func TestVersionMismatch(t *testing.T) {
	c, s := pipes()
	sv := serve(t, s, ServeOptions{})
	h := hello{version: Version + 1, role: roleTarget, granule: 65536, path: "/x"}
	fw := newFrameWriter(c)
	if err := fw.write(tHello, h.encode()); err != nil {
		t.Fatal(err)
	}
	fr := newFrameReader(c)
	typ, p, err := fr.next()
	if err != nil || typ != tError {
		t.Fatalf("got %v %v", typ, err)
	}
	perr, _ := parseError(p)
	msg := fmt.Sprint(perr)
	if !strings.Contains(msg, "version 1") || !strings.Contains(msg, "version 2") {
		t.Fatalf("got %q", msg)
	}
	c.Close()
	sv.wait(t)
	// And a welcome of another version is refused by the client.
	c, s = pipes()
	go func() {
		fr, fw := newFrameReader(s), newFrameWriter(s)
		fr.next()
		w := welcome{version: Version + 1, digest: blocksync.SHA256}
		fw.write(tWelcome, w.encode())
		fr.next()
		s.Close()
	}()
	src := bytesSource{}
	_, err = Push(context.Background(), c, src, "/x", Options{})
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("client: %v", err)
	}
}

// bytesSource is an empty SRC in memory.
type bytesSource struct{}

func (bytesSource) ReadAt(p []byte, off int64) (int, error) { return 0, nil }
func (bytesSource) Size() int64                             { return 0 }
func (bytesSource) Name() string                            { return "memory" }
