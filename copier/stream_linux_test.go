package copier_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// packers are the Debian tools that make compressed images, with the
// suffix they give.
var packers = []struct {
	tool string
	args []string
	ext  string
}{
	{"xz", []string{"-T0", "-c"}, ".xz"},
	{"xz", []string{"-T1", "-c"}, ".t1.xz"},
	{"gzip", []string{"-c"}, ".gz"},
	{"pigz", []string{"-c"}, ".pigz.gz"},
	{"zstd", []string{"-q", "-c"}, ".zst"},
	{"bzip2", []string{"-c"}, ".bz2"},
}

// pack compresses data with tool into path.
func pack(t *testing.T, tool string, args []string, data []byte, path string) {
	t.Helper()
	need(t, tool)
	cmd := exec.Command(tool, args...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	writeFile(t, path, out)
}

// packableImage is n bytes that compress fast (the test machine's cores
// are shared): a random 4 KiB block repeated, each with its index in its
// first bytes, every third one zeros, and a random tail.
func packableImage(n int64, seed uint64) []byte {
	b := make([]byte, n)
	block := randomBytes(4096, seed)
	for off, k := int64(0), uint64(0); off < n; off, k = off+4096, k+1 {
		if k%3 == 2 {
			continue
		}
		c := copy(b[off:], block)
		if c >= 8 {
			binary.LittleEndian.PutUint64(b[off:], k)
		}
	}
	copy(b[max(0, n-333):], randomBytes(333, seed+1))
	return b
}

// packAll writes every size's image compressed by every packer into a
// folder; names maps each file to its decompressed bytes.
func packAll(t *testing.T, sizes []int64) (string, map[string][]byte) {
	dir := t.TempDir()
	names := map[string][]byte{}
	for i, n := range sizes {
		data := packableImage(n, uint64(i+100))
		for _, p := range packers {
			name := fmt.Sprintf("img%d-%d.raw%s", i, n, p.ext)
			pack(t, p.tool, p.args, data, filepath.Join(dir, name))
			names[name] = data
		}
	}
	return dir, names
}

// TestCompressedCopies: images made by xz, gzip, pigz, zstd and bzip2
// are recognized by their first bytes and decompressed, from a local
// file and from nginx (ranges and not), into new files; the xz ones say
// their size, the others are copied to their end. --src-format raw
// copies the compressed bytes as they are.
func TestCompressedCopies(t *testing.T) {
	root, files := packAll(t, []int64{0, 1, 4097, 9<<20 + 12345})
	s := webtest.Nginx(t, root, webtest.Config{})
	plain := webtest.Nginx(t, root, webtest.Config{NoRanges: true})
	for name, want := range files {
		for _, src := range []string{filepath.Join(root, name), s.URL + "/" + name, plain.URL + "/" + name} {
			dst := filepath.Join(t.TempDir(), "dst")
			rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, BlockSize: 1 << 20})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			compareFile(t, dst, want)
			if rep.Length != int64(len(want)) {
				t.Fatalf("%s: length %d, want %d", src, rep.Length, len(want))
			}
		}
		packed, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + name, Dst: dst, SrcFormat: copier.SrcFormatRaw}); err != nil {
			t.Fatal(err)
		}
		compareFile(t, dst, packed)
	}
}

// TestCompressedDamage: a compressed image cut short, or with a byte
// changed, fails the copy (never a success) and leaves no new DST.
func TestCompressedDamage(t *testing.T) {
	root, files := packAll(t, []int64{3<<20 + 5})
	for name := range files {
		packed, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(root, "cut-"+name)
		writeFile(t, cut, packed[:len(packed)*2/3])
		flipped := bytes.Clone(packed)
		flipped[len(flipped)/2] ^= 0x40
		bad := filepath.Join(root, "bad-"+name)
		writeFile(t, bad, flipped)
		for _, src := range []string{cut, bad} {
			dst := filepath.Join(t.TempDir(), "dst")
			_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst})
			var r *copier.RefusedError
			if err == nil || errors.As(err, &r) {
				t.Fatalf("%s: got %v, want a failure", src, err)
			}
			if _, serr := os.Lstat(dst); serr == nil {
				t.Fatalf("%s: failed (%v) and left DST", src, err)
			}
			t.Logf("%s: %v", filepath.Base(src), err)
		}
	}
}

// TestStdinStreams copies from "-" (Options.Stream.Stdin: a pipe with a
// slow producer) and from a FIFO, raw and compressed, sizes known (Length)
// and not, into files and a loop device.
func TestStdinStreams(t *testing.T) {
	for _, n := range webSizes {
		data := holeyImage(n, uint64(n))
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			rep, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dst, Stream: copier.StreamOptions{Stdin: slowReader(data)}})
			if err != nil {
				t.Fatal(err)
			}
			compareFile(t, dst, data)
			if rep.Length != n {
				t.Fatalf("length %d, want %d", rep.Length, n)
			}
			dst2 := filepath.Join(t.TempDir(), "dst")
			fifoCopy(t, data, copier.Options{Dst: dst2, Length: n, LengthSet: true, DstSize: copier.SizeTruncate})
			compareFile(t, dst2, data)
		})
	}
}

// TestStreamIntoLoopDevice: a stream onto a device needs its length
// announced; with it, the device holds the stream and the rest is as it
// was.
func TestStreamIntoLoopDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	const n = 3<<20 + 4096 + 511
	data := holeyImage(n, 5)
	dev, _ := blocktest.Device(t, 4<<20, "--direct-io=on")
	marker := bytes.Repeat([]byte{0xAA}, 4<<20)
	writeFile(t, dev, marker)
	_, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dev, Stream: copier.StreamOptions{Stdin: bytes.NewReader(data)}})
	var r *copier.RefusedError
	if !errors.As(err, &r) || r.Field != "SrcSize" {
		t.Fatalf("got %v, want a refusal asking for SrcSize", err)
	}
	compareDevicePrefix(t, dev, marker)
	if _, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dev, Length: n, LengthSet: true,
		Stream: copier.StreamOptions{Stdin: bytes.NewReader(data)}}); err != nil {
		t.Fatal(err)
	}
	compareDevicePrefix(t, dev, append(bytes.Clone(data), marker[n:]...))
	// A stream shorter than announced fails.
	_, err = copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dev, Length: n + 4096, LengthSet: true,
		Stream: copier.StreamOptions{Stdin: bytes.NewReader(data)}})
	if err == nil || errors.As(err, &r) {
		t.Fatalf("a stream shorter than announced: got %v, want a failure", err)
	}
}

// TestStreamRefusals: what a stream cannot do is refused before DST is
// touched.
func TestStreamRefusals(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "dst")
	in := copier.StreamOptions{Stdin: bytes.NewReader([]byte("data"))}
	for name, o := range map[string]copier.Options{
		"resume": {Src: "-", Dst: dst, Resume: true, Stream: in},
		"verify": {Src: "-", Dst: dst, Verify: true, Stream: in},
		"as-dst": {Src: "/etc/hostname", Dst: "-", Stream: in},
	} {
		_, err := copier.Copy(context.Background(), o)
		var r *copier.RefusedError
		if !errors.As(err, &r) {
			t.Fatalf("%s: got %v, want a refusal", name, err)
		}
		t.Logf("%s: %v", name, err)
		if _, err := os.Lstat(dst); err == nil {
			t.Fatalf("%s: DST was created", name)
		}
	}
}

// slowReader gives data in small pieces with pauses, as a slow producer
// on a pipe does.
func slowReader(data []byte) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for off := 0; off < len(data); off += 256 << 10 {
			pw.Write(data[off:min(len(data), off+256<<10)])
			time.Sleep(time.Millisecond)
		}
		pw.Close()
	}()
	return pr
}

// fifoCopy copies data written into a FIFO by another goroutine.
func fifoCopy(t *testing.T, data []byte, o copier.Options) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	o.Src = fifo
	if _, err := copier.Copy(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestStreamAnnouncedSize: Options.SrcSize announces a stream's size; a
// stream that ends before it or goes on after it fails the copy, and no
// new DST is left.
func TestStreamAnnouncedSize(t *testing.T) {
	const n = 2<<20 + 4097
	data := holeyImage(n, 8)
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{n, true}, {n + 1, false}, {n - 1, false}, {n - 4096, false}} {
		dst := filepath.Join(t.TempDir(), "dst")
		_, err := copier.Copy(context.Background(), copier.Options{Src: "-", Dst: dst, SrcSize: tc.size,
			Stream: copier.StreamOptions{Stdin: bytes.NewReader(data)}})
		var r *copier.RefusedError
		switch {
		case tc.ok && err != nil:
			t.Fatalf("size %d: %v", tc.size, err)
		case tc.ok:
			compareFile(t, dst, data)
		case err == nil || errors.As(err, &r):
			t.Fatalf("size %d of a stream of %d: got %v, want a failure", tc.size, n, err)
		default:
			if _, serr := os.Lstat(dst); serr == nil {
				t.Fatalf("size %d: failed (%v) and left DST", tc.size, err)
			}
			t.Logf("size %d: %v", tc.size, err)
		}
	}
}

// TestCompressedExpectChecksum: the digest is of the bytes as published
// (compressed), from nginx and from stdin; the digest of the
// decompressed bytes is a mismatch.
func TestCompressedExpectChecksum(t *testing.T) {
	root, files := packAll(t, []int64{5<<20 + 3})
	s := webtest.Nginx(t, root, webtest.Config{})
	for name, data := range files {
		packed, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		good := fmt.Sprintf("sha256:%x", sha256sum(packed))
		wrong := fmt.Sprintf("sha256:%x", sha256sum(data))
		for _, tc := range []struct {
			sum string
			ok  bool
		}{{good, true}, {wrong, false}} {
			for _, o := range []copier.Options{{Src: s.URL + "/" + name}, {Src: "-", Stream: copier.StreamOptions{Stdin: bytes.NewReader(packed)}}} {
				o.Dst, o.ExpectChecksum = filepath.Join(t.TempDir(), "dst"), tc.sum
				_, err := copier.Copy(context.Background(), o)
				var m *expectsum.MismatchError
				switch {
				case tc.ok && err != nil:
					t.Fatalf("%s from %s: %v", name, o.Src, err)
				case tc.ok:
					compareFile(t, o.Dst, data)
				case !errors.As(err, &m):
					t.Fatalf("%s from %s: got %v, want a mismatch", name, o.Src, err)
				}
			}
		}
	}
}

// TestBatchOneStdin: a second job reading standard input is refused
// before it looks at it (a look takes the first job's bytes).
func TestBatchOneStdin(t *testing.T) {
	dir := t.TempDir()
	in := copier.StreamOptions{Stdin: bytes.NewReader([]byte("data"))}
	_, err := copier.PrepareAll([]copier.Options{{Src: "-", Dst: filepath.Join(dir, "a"), Stream: in},
		{Src: "-", Dst: filepath.Join(dir, "b"), Stream: in}}, copier.BatchOptions{})
	var b *copier.BatchError
	if !errors.As(err, &b) || len(b.Jobs) != 1 || b.Jobs[0].Index != 1 {
		t.Fatalf("got %v, want job 2 refused", err)
	}
	t.Log(err)
}

// TestCompressedResume: an xz image (whose index says its size) copied
// from nginx, stopped part-way, resumes: the stream is read again from
// its start and what was copied is skipped, not written again.
func TestCompressedResume(t *testing.T) {
	need(t, "xz")
	data := packableImage(40<<20+777, 12)
	root := t.TempDir()
	pack(t, "xz", []string{"-T0", "-1", "--block-size=4MiB", "-c"}, data, filepath.Join(root, "img.xz"))
	s := webtest.Nginx(t, root, webtest.Config{})
	dst := filepath.Join(t.TempDir(), "dst")
	o := copier.Options{Src: s.URL + "/img.xz", Dst: dst, Resume: true, BlockSize: 1 << 20, QueueDepth: 2,
		MaxRate: 32 << 20, SyncEvery: 50 * time.Millisecond}
	p := newProgress()
	o.Progress = p.Progress
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for p.Progress.Done.Load() < 16<<20 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := copier.Copy(ctx, o); err == nil {
		t.Fatal("the first run was not stopped")
	}
	o.Progress, o.MaxRate = nil, 0
	rep, err := copier.Copy(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed == 0 {
		t.Fatalf("did not resume: %+v", rep)
	}
	compareFile(t, dst, data)
	t.Logf("resumed at %d", rep.Resumed)
}
