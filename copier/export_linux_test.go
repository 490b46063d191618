package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/nbd"
)

// An NBD end between Prepare and Run: a server gone, or another export at
// the same address, is a refusal with nothing written; the report of a
// copy says how the export was reached.

func TestExportGoneBeforeRun(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dst := filepath.Join(t.TempDir(), "dst")
	srv := nbdtest.Nbdkit(t, nbdtest.Unix, "memory", "1M")
	p, err := copier.Prepare(copier.Options{Src: srv.URI, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	rep, err := p.Run(context.Background())
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "the NBD server failed a first read") || rep.DstState != copier.DstUntouched {
		t.Fatalf("Run after the server stopped: %v (state %v); want a refusal, DST untouched", err, rep.DstState)
	}
	if _, err := os.Lstat(dst); err == nil {
		t.Errorf("%s was created although the copy was refused", dst)
	}
}

// TestExportChangedBeforeRun: a plan run a second time connects anew, and
// refuses an export that is not the one Prepare saw (another server at
// the same socket, of another size).
func TestExportChangedBeforeRun(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, sock := filepath.Join(dir, "src"), filepath.Join(dir, "sock")
	writeFile(t, src, randomBytes(1<<20, 2))
	first := nbdtest.StartAt(t, sock, "", "nbdkit", "-f", "memory", "2M")
	p, err := copier.Prepare(copier.Options{Src: src, Dst: first.URI})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Stop()
	os.Remove(sock) // the killed server leaves its socket file
	second := nbdtest.StartAt(t, sock, "", "nbdkit", "-f", "memory", "4M")
	_, err = p.Run(context.Background())
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "changed between checking and opening") {
		t.Fatalf("Run again against another export at the same socket: %v; want a refusal", err)
	}
	if got := readExport(t, second.URI); !bytes.Equal(got, make([]byte, len(got))) {
		t.Errorf("the second export was written although the copy was refused")
	}
}

// TestPlanClose: a plan that is not run closes its connections with
// Close: a server for one client at a time can then serve the next.
func TestPlanClose(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd")
	img := filepath.Join(t.TempDir(), "img")
	writeFile(t, img, randomBytes(1<<20, 4))
	uri := nbdtest.Start(t, nbdtest.Unix, "", "qemu-nbd", "--persistent", "-r", "-f", "raw", img).URI
	p, err := copier.Prepare(copier.Options{Src: uri, Dst: filepath.Join(t.TempDir(), "dst")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readExport(t, uri); !bytes.Equal(got, randomBytes(1<<20, 4)) {
		t.Fatal("the export read after Close differs from the image")
	}
}

// TestExportReport: a copy to an export reports the engine by the
// export's transport, on the pool (which serves every kind of end) chosen
// by auto, by name, or by the name NBD copies ran under ("nbd").
func TestExportReport(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src")
	data := randomBytes(3<<20+5, 3)
	writeFile(t, src, data)
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool, "nbd"} {
		dst := nbdtest.Nbdkit(t, nbdtest.TCP, "memory", "4M").URI
		rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng, NBD: copier.NBDOptions{Connections: 2}})
		if err != nil {
			t.Fatalf("engine %s: %v", eng, err)
		}
		if rep.Engine != "nbd" || rep.DirectDst || !rep.Synced || rep.DstState != copier.DstComplete || rep.Bytes != 3<<20+5 ||
			!strings.Contains(rep.EngineDetail, dst+" over 2 connection(s)") {
			t.Fatalf("engine %s: report %+v: want engine nbd, DST not direct, synced, complete, all bytes, 2 connections", eng, rep)
		}
		if got := readExport(t, dst)[:len(data)]; !bytes.Equal(got, data) {
			t.Fatalf("engine %s: the export differs from SRC", eng)
		}
	}
}

// readExport reads a whole export.
func readExport(t *testing.T, uri string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, uri, nbd.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := make([]byte, c.Info().Size)
	if _, err := c.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompareExports: Compare and Checksum read NBD ends as they read
// files (through the registry of kinds, as a copy does): an export
// serving a file compares equal with it, reports the first byte that
// differs from another, and checksums as the file does; an offset that is
// not a multiple of the server's minimum block size is refused.
func TestCompareExports(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	img, other := filepath.Join(dir, "img"), filepath.Join(dir, "other")
	data := randomBytes(5<<20+4096, 9)
	writeFile(t, img, data)
	changed := bytes.Clone(data)
	changed[4<<20+3] ^= 0x40
	writeFile(t, other, changed)
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "file", img).URI
	ctx := context.Background()
	if _, err := copier.Compare(ctx, copier.ReadOptions{Src: img, Dst: uri}); err != nil {
		t.Fatalf("compare a file with its export: %v", err)
	}
	_, err := copier.Compare(ctx, copier.ReadOptions{Src: uri, Dst: other})
	var mm *copier.MismatchError
	if !errors.As(err, &mm) || mm.Offset != 4<<20+3 {
		t.Fatalf("compare the export with a changed copy: %v; want a mismatch at %d", err, 4<<20+3)
	}
	sum := func(src string) string {
		t.Helper()
		rep, err := copier.Checksum(ctx, copier.ReadOptions{Src: src, Sum: copier.NewTestSum})
		if err != nil {
			t.Fatalf("checksum %s: %v", src, err)
		}
		return rep.Checksum.Checksum
	}
	if a, b := sum(img), sum(uri); a != b {
		t.Fatalf("checksum of the file %s, of its export %s", a, b)
	}
	strict := nbdtest.Nbdkit(t, nbdtest.Unix, "--filter=blocksize-policy", "-r", "file", img, "blocksize-minimum=4096", "blocksize-error-policy=error").URI
	_, err = copier.Compare(ctx, copier.ReadOptions{Src: img, Dst: strict, DstOffset: 512, SrcOffset: 512})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "minimum block size 4096") {
		t.Fatalf("compare at an offset the export does not take: %v; want a refusal", err)
	}
}
