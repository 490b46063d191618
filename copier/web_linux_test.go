package copier_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// webSizes are the awkward sizes every web SRC is copied at: empty, one
// byte, under a sector, a page and one, an odd tail past several blocks.
var webSizes = []int64{0, 1, 511, 4097, 9<<20 + 12345}

// holeyImage is n bytes with zero runs, so that the copy has zero blocks
// to leave out.
func holeyImage(n int64, seed uint64) []byte {
	b := randomBytes(n, seed)
	for off := int64(0); off < n; off += 3 << 20 {
		clear(b[off:min(n, off+1<<20+77)])
	}
	return b
}

// serve writes each size's image into a folder and returns the folder
// and the images by name.
func serve(t *testing.T, sizes []int64) (string, map[string][]byte) {
	dir := t.TempDir()
	files := map[string][]byte{}
	for i, n := range sizes {
		name := fmt.Sprintf("img%d-%d.raw", i, n)
		files[name] = holeyImage(n, uint64(i+1))
		writeFile(t, filepath.Join(dir, name), files[name])
	}
	return dir, files
}

// TestWebCopies copies objects of awkward sizes from nginx over HTTP and
// HTTPS (HTTP/2 offered) and from lighttpd, into new files, and compares
// them byte for byte; DST stays sparse where SRC has zero blocks.
func TestWebCopies(t *testing.T) {
	root, files := serve(t, webSizes)
	servers := map[string]func(*testing.T) (*webtest.Server, copier.WebOptions){
		"nginx-http": func(t *testing.T) (*webtest.Server, copier.WebOptions) {
			return webtest.Nginx(t, root, webtest.Config{}), copier.WebOptions{}
		},
		"nginx-https-h2": func(t *testing.T) (*webtest.Server, copier.WebOptions) {
			s := webtest.Nginx(t, root, webtest.Config{TLS: true, HTTP2: true})
			return s, copier.WebOptions{CAFile: s.CAFile()}
		},
		"nginx-noranges": func(t *testing.T) (*webtest.Server, copier.WebOptions) {
			return webtest.Nginx(t, root, webtest.Config{NoRanges: true}), copier.WebOptions{}
		},
		"lighttpd": func(t *testing.T) (*webtest.Server, copier.WebOptions) {
			return webtest.Lighttpd(t, root), copier.WebOptions{}
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			s, w := start(t)
			for file, want := range files {
				dst := filepath.Join(t.TempDir(), "dst")
				rep, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + file, Dst: dst, Web: w, QueueDepth: 4, BlockSize: 1 << 20})
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				compareFile(t, dst, want)
				if rep.Length != int64(len(want)) {
					t.Fatalf("%s: report length %d, want %d", file, rep.Length, len(want))
				}
				if len(want) > 4<<20 && rep.BytesHoles == 0 {
					t.Fatalf("%s: no zero block left as a hole: %+v", file, rep)
				}
			}
		})
	}
}

// TestWebIntoLoopDevice copies an object onto a loop device.
func TestWebIntoLoopDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	const n = 5<<20 + 4096*3 + 512
	root, files := serve(t, []int64{n})
	s := webtest.Nginx(t, root, webtest.Config{})
	dev, _ := blocktest.Device(t, n+1<<20, "--direct-io=on")
	writeFile(t, dev, bytes.Repeat([]byte{0xAA}, n+1<<20))
	for file, want := range files {
		if _, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + file, Dst: dev}); err != nil {
			t.Fatal(err)
		}
		compareDevicePrefix(t, dev, want)
	}
}

// TestWebRefusals: a missing object, a wrong certificate, an object as
// DST are refused before anything is written.
func TestWebRefusals(t *testing.T) {
	root, _ := serve(t, []int64{4097})
	s := webtest.Nginx(t, root, webtest.Config{TLS: true})
	dst := filepath.Join(t.TempDir(), "dst")
	for name, o := range map[string]copier.Options{
		"missing":   {Src: s.URL + "/nothing", Dst: dst, Web: copier.WebOptions{CAFile: s.CAFile()}},
		"untrusted": {Src: s.URL + "/img0-4097.raw", Dst: dst},
		"as-dst":    {Src: filepath.Join(root, "img0-4097.raw"), Dst: s.URL + "/x"},
		"expect":    {Src: s.URL + "/img0-4097.raw", Dst: dst, ExpectChecksum: "sha1:00"},
	} {
		_, err := copier.Copy(context.Background(), o)
		var r *copier.RefusedError
		if !errors.As(err, &r) {
			t.Fatalf("%s: got %v, want a refusal", name, err)
		}
		if _, err := os.Lstat(dst); err == nil {
			t.Fatalf("%s: DST was created", name)
		}
		t.Logf("%s: %v", name, err)
	}
}

// TestWebExpectChecksum: the digest of what was read is compared; a
// mismatch fails the copy and leaves no new DST.
func TestWebExpectChecksum(t *testing.T) {
	root, files := serve(t, []int64{9<<20 + 3})
	s := webtest.Nginx(t, root, webtest.Config{})
	for file, want := range files {
		good := fmt.Sprintf("sha256:%x", sha256sum(want))
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + file, Dst: dst, ExpectChecksum: good}); err != nil {
			t.Fatal(err)
		}
		compareFile(t, dst, want)
		bad := "sha256:" + strings.Repeat("0", 64)
		dst2 := filepath.Join(t.TempDir(), "dst")
		_, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + file, Dst: dst2, ExpectChecksum: bad})
		var m *expectsum.MismatchError
		if !errors.As(err, &m) {
			t.Fatalf("got %v, want a mismatch", err)
		}
		if _, err := os.Lstat(dst2); err == nil {
			t.Fatal("a DST whose SRC did not match was kept")
		}
	}
}

// need skips the test when a command is missing.
func need(t *testing.T, tool string) {
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s is not installed", tool)
	}
}

func sha256sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// TestFileExpectChecksum: a local file's digest is made from what the
// copy reads (holes as zeros): a match copies, a mismatch fails and
// leaves no new DST, a part of the file is refused.
func TestFileExpectChecksum(t *testing.T) {
	for _, eng := range engines {
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		data := holeyImage(9<<20+4097, 3)
		writeFile(t, src, data)
		good := fmt.Sprintf("sha256:%x", sha256sum(data))
		dst := filepath.Join(dir, "dst")
		if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, Engine: eng, ExpectChecksum: good}); err != nil {
			t.Fatal(err)
		}
		compareFile(t, dst, data)
		dst2 := filepath.Join(dir, "dst2")
		_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst2, Engine: eng, ExpectChecksum: "md5:" + strings.Repeat("0", 32)})
		var m *expectsum.MismatchError
		if !errors.As(err, &m) {
			t.Fatalf("%s: got %v, want a mismatch", eng, err)
		}
		if _, err := os.Lstat(dst2); err == nil {
			t.Fatal("a DST whose SRC did not match was kept")
		}
		_, err = copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst2, Engine: eng, ExpectChecksum: good, SrcOffset: 4096})
		var r *copier.RefusedError
		if !errors.As(err, &r) || r.Field != "ExpectChecksum" {
			t.Fatalf("%s: a part of SRC: got %v, want a refusal", eng, err)
		}
	}
}
