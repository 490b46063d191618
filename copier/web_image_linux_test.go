package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// webImageShapes are the images read from a URL: every shape of the
// local tests but the chain (whose middle names its base by an absolute
// path), an odd virtual size, and a chain by relative names.
func webImageShapes() []imageShape {
	var shapes []imageShape
	for _, s := range imageShapes {
		if s.name != "chain of three" {
			shapes = append(shapes, s)
		}
	}
	return append(shapes,
		imageShape{"odd size", plainImage("1000001", "", "write -P 5 0 4097", "write -P 6 999000 1001")},
		imageShape{"relative chain", relativeChain})
}

// relativeChain is three deep by relative names (a raw base shorter than
// the overlays, a qcow2 over it, a qcow2 over that), as an image
// published with its backing files beside it.
func relativeChain(t testing.TB, dir string) string {
	writeFile(t, filepath.Join(dir, "base.raw"), randomBytes(1<<20+512, 5))
	mid := filepath.Join(dir, "mid.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", "base.raw", "-F", "raw", mid, "3m")
	qemuIO(t, mid, "write -P 0x44 512k 128k", "write -z 0 64k", "write -P 0x45 2m 4k")
	top := filepath.Join(dir, "img.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", "mid.qcow2", "-F", "qcow2", top, "4m")
	qemuIO(t, top, "write -P 0x46 600k 10k", "write -z 2m 64k", "write -P 0x47 3146240 1k")
	return top
}

// imageFolders makes each shape in a folder of its own under root and
// returns the images' names relative to root and qemu-img's raw
// conversion of each.
func imageFolders(t *testing.T, root string, shapes []imageShape) (names, raws []string) {
	for i, s := range shapes {
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		img := s.make(t, dir)
		names = append(names, fmt.Sprintf("%d/%s", i, filepath.Base(img)))
		raws = append(raws, qemuRaw(t, img, t.TempDir()))
	}
	return names, raws
}

// formatOf is the SRC format a shape is copied with: found by its magic,
// but a chain's, which a guessed image may not follow.
func formatOf(sh imageShape) string {
	if sh.name == "relative chain" {
		return copier.FormatQcow2
	}
	return copier.FormatAuto
}

// TestWebQcow2: each shape of image at an nginx URL, auto-detected,
// copied to a new file by both backends, is what qemu-img convert makes
// of the local image, holes as holes.
func TestWebQcow2(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	shapes := webImageShapes()
	root := t.TempDir()
	names, raws := imageFolders(t, root, shapes)
	s := webtest.Nginx(t, root, webtest.Config{})
	for i, sh := range shapes {
		for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			t.Run(sh.name+"/"+string(eng), func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "out.raw")
				rep, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + names[i], Dst: dst, Engine: eng, Verify: true, SrcFormat: formatOf(sh)})
				if err != nil {
					t.Fatal(err)
				}
				sameImage(t, dst, raws[i])
				if got, q := dataBytes(t, dst), dataBytes(t, raws[i]); got > q {
					t.Errorf("DST has %d bytes of data, qemu-img's copy %d", got, q)
				}
				if rep.Length != fileLen(t, raws[i]) {
					t.Errorf("report says %d bytes, the guest has %d", rep.Length, fileLen(t, raws[i]))
				}
			})
		}
	}
}

// TestWebQcow2Loop: an image from a URL onto a loop device that starts as
// garbage, both backends: the device reads as qemu-img's conversion.
func TestWebQcow2Loop(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	blocktest.NeedRoot(t)
	root := t.TempDir()
	shapes := []imageShape{{"relative chain", relativeChain}, {"zstd", compressed("zstd")}}
	names, raws := imageFolders(t, root, shapes)
	s := webtest.Nginx(t, root, webtest.Config{})
	for i := range shapes {
		want, err := os.ReadFile(raws[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			t.Run(shapes[i].name+"/"+string(eng), func(t *testing.T) {
				dev, _ := blocktest.Device(t, int64(len(want)+4095)&^4095)
				writeFile(t, dev, bytes.Repeat([]byte{0xee}, (len(want)+4095)&^4095))
				if _, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + names[i], Dst: dev, Engine: eng, SrcFormat: formatOf(shapes[i])}); err != nil {
					t.Fatal(err)
				}
				compareDevicePrefix(t, dev, want)
			})
		}
	}
}

// TestS3Qcow2: images in versitygw, a chain by relative keys among them,
// read as s3://bucket/key onto new files.
func TestS3Qcow2(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	s := webtest.Versity(t)
	c, err := minio.New(strings.TrimPrefix(s.URL, "http://"), &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "images", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	shapes := []imageShape{{"relative chain", relativeChain}, {"zlib", compressed("zlib")}, {"odd size", plainImage("1000001", "", "write -P 5 0 4097")}}
	names, raws := imageFolders(t, root, shapes)
	err = filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		key, _ := filepath.Rel(root, path)
		_, err = c.FPutObject(ctx, "images", key, path, minio.PutObjectOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	for i := range shapes {
		t.Run(shapes[i].name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out.raw")
			if _, err := copier.Copy(ctx, copier.Options{Src: "s3://images/" + names[i], Dst: dst, Web: copier.WebOptions{S3Endpoint: s.URL}, SrcFormat: formatOf(shapes[i])}); err != nil {
				t.Fatal(err)
			}
			sameImage(t, dst, raws[i])
		})
	}
}

// TestWebQcow2Refusals: what is refused before DST is touched (an
// existing DST keeps its bytes): a missing image, a backing file by an
// absolute name, a compressed image (with the line to run), an image
// read only in order (a server without ranges, standard input; a
// sparse vmdk too), a digest that cannot be checked on an image.
func TestWebQcow2Refusals(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	need(t, "xz")
	root := t.TempDir()
	img := plainImage("4m", "", mixed...)(t, root)
	abs := filepath.Join(root, "abs.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", img, "-F", "qcow2", abs, "4m")
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	pack(t, "xz", []string{"-c"}, b, filepath.Join(root, "img.qcow2.xz"))
	vmdk := filepath.Join(root, "img.vmdk")
	qemu(t, "qemu-img", "convert", "-f", "qcow2", "-O", "vmdk", img, vmdk)
	vb, err := os.ReadFile(vmdk)
	if err != nil {
		t.Fatal(err)
	}
	s := webtest.Nginx(t, root, webtest.Config{})
	whole := webtest.Nginx(t, root, webtest.Config{NoRanges: true})
	dst := filepath.Join(t.TempDir(), "dst")
	old := randomBytes(1<<20, 3)
	cases := []struct {
		name string
		o    copier.Options
		kind copier.Kind
		says string
	}{
		{"404", copier.Options{Src: s.URL + "/none.qcow2", SrcFormat: copier.FormatQcow2}, copier.KindNotFound, "404"},
		{"404 auto", copier.Options{Src: s.URL + "/none.qcow2"}, copier.KindNotFound, "404"},
		{"absolute backing name", copier.Options{Src: s.URL + "/abs.qcow2", SrcFormat: copier.FormatQcow2}, copier.KindImageFormat, "not a name relative to the image's URL"},
		{"xz over http", copier.Options{Src: s.URL + "/img.qcow2.xz"}, copier.KindImageFormat, "curl -fL '" + s.URL + "/img.qcow2.xz' | xz -dc > image.qcow2"},
		{"xz file", copier.Options{Src: filepath.Join(root, "img.qcow2.xz")}, copier.KindImageFormat, "xz -dc '"},
		{"no ranges", copier.Options{Src: whole.URL + "/img.qcow2"}, copier.KindImageFormat, "curl -fL -o image.qcow2 '" + whole.URL + "/img.qcow2'"},
		{"stdin", copier.Options{Src: "-", Stream: copier.StreamOptions{Stdin: bytes.NewReader(b)}}, copier.KindImageFormat, "write it to a file first"},
		// A sparse vmdk likewise (its container's bytes were copied, exit 0).
		{"vmdk no ranges", copier.Options{Src: whole.URL + "/img.vmdk"}, copier.KindImageFormat, "curl -fL -o image.vmdk '" + whole.URL + "/img.vmdk'"},
		{"vmdk stdin", copier.Options{Src: "-", Stream: copier.StreamOptions{Stdin: bytes.NewReader(vb)}}, copier.KindImageFormat, "is a vmdk image read only in order"},
		{"expect checksum", copier.Options{Src: s.URL + "/img.qcow2", ExpectChecksum: "sha256:" + strings.Repeat("0", 64)}, copier.KindNotSupported, "ExpectChecksum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, dst, old)
			c.o.Dst = dst
			_, err := copier.Copy(context.Background(), c.o)
			var r *copier.RefusedError
			if !errors.As(err, &r) || r.Kind != c.kind || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want a refusal (%v) that says %q", err, c.kind, c.says)
			}
			compareFile(t, dst, old)
			t.Log(err)
		})
	}
}

// TestWebQcow2Changed: an image replaced during the copy fails it,
// naming the object (ErrChanged, not a refusal), and no new DST is left.
func TestWebQcow2Changed(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	root := t.TempDir()
	raw := filepath.Join(t.TempDir(), "src.raw")
	writeFile(t, raw, randomBytes(24<<20, 12))
	img := filepath.Join(root, "img.qcow2")
	qemu(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, img)
	other := filepath.Join(t.TempDir(), "other.qcow2")
	writeFile(t, raw, randomBytes(24<<20, 13))
	qemu(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, other)
	next, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	s := webtest.Nginx(t, root, webtest.Config{})
	p := newProgress()
	replaceSoon(t, img, next, p)
	dst := filepath.Join(t.TempDir(), "dst")
	_, err = copier.Copy(context.Background(), copier.Options{Src: s.URL + "/img.qcow2", Dst: dst,
		BlockSize: 1 << 20, QueueDepth: 2, MaxRate: 16 << 20, Progress: p.Progress})
	var r *copier.RefusedError
	if !errors.Is(err, httpobj.ErrChanged) || errors.As(err, &r) || !strings.Contains(err.Error(), "img.qcow2") {
		t.Fatalf("got %v, want a failure naming the changed image", err)
	}
	if _, serr := os.Lstat(dst); serr == nil {
		t.Fatal("a DST from a changed image was kept")
	}
	t.Log(err)
}

// TestWebQcow2Prefetch: an image of many small L2 tables (512-byte
// clusters) costs about one request per table in all, not one per table
// each time the image is opened (Prepare's check, its map, the run): the
// tables come in parallel, once, and are kept.
func TestWebQcow2Prefetch(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	root := t.TempDir()
	img := plainImage("4m", "cluster_size=512", "write -P 7 0 4m")(t, root)
	const tables = 4 << 20 / (512 * 64) // 64 entries of 512 bytes each
	var gets atomic.Int64
	fs := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dst := filepath.Join(t.TempDir(), "dst")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: srv.URL + "/img.qcow2", Dst: dst}); err != nil {
		t.Fatal(err)
	}
	sameImage(t, dst, qemuRaw(t, img, t.TempDir()))
	// The data: one host read per run of clusters between two tables.
	// Without the cache, the tables alone were read three times.
	if n := gets.Load(); n > 3*tables {
		t.Fatalf("%d requests for an image of %d L2 tables", n, tables)
	}
	t.Logf("%d requests, %d L2 tables", gets.Load(), tables)
}

// TestWebDepthFollowsConnections: the copy keeps one range request in
// flight per connection, unless a queue depth is given.
func TestWebDepthFollowsConnections(t *testing.T) {
	root, files := serve(t, []int64{72<<20 + 5})
	s := webtest.Nginx(t, root, webtest.Config{})
	for name, want := range files {
		for _, c := range []struct{ conns, depth, want int }{{0, 0, httpobj.DefaultConnections}, {3, 0, 3}, {16, 0, 10}, {3, 7, 7}} {
			dst := filepath.Join(t.TempDir(), "dst")
			rep, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + name, Dst: dst, QueueDepth: c.depth,
				Web: copier.WebOptions{Connections: c.conns}})
			if err != nil {
				t.Fatal(err)
			}
			compareFile(t, dst, want)
			// 16 connections: the object has only 10 blocks of 8 MiB.
			if rep.QueueDepth != c.want {
				t.Errorf("%d connections, depth %d given: queue depth %d, want %d", c.conns, c.depth, rep.QueueDepth, c.want)
			}
		}
	}
}
