package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// The kind of "mem://NAME": a buffer in memory that a test made
// (memBuffer). It lives in this one file, and registers itself below: that
// a new kind of end is its own files and one registration, with nothing
// else in copier or the engine touched, is what this file shows. Its ends
// move their own bytes (an engine.IOEnd, served by the pool), like an NBD
// export, and have a fixed size.

func init() { registerKind(endKind{name: "mem", inspect: inspectMem}, "mem") }

// memBuffers are the buffers mem:// names.
var memBuffers struct {
	sync.Mutex
	m map[string]*memBytes
}

// memBuffer makes mem://name hold b for the test's life; a positive max
// is the most one request may move on it.
func memBuffer(t testing.TB, name string, b []byte, max ...int) string {
	memBuffers.Lock()
	defer memBuffers.Unlock()
	if memBuffers.m == nil {
		memBuffers.m = map[string]*memBytes{}
	}
	memBuffers.m[name] = &memBytes{b: b}
	if len(max) > 0 {
		memBuffers.m[name].max = max[0]
	}
	t.Cleanup(func() {
		memBuffers.Lock()
		delete(memBuffers.m, name)
		memBuffers.Unlock()
	})
	return "mem://" + name
}

// memEnd is a memory buffer as an end of a copy.
type memEnd struct {
	ep  *endpoint
	buf *memBytes
}

func inspectMem(p *Plan, uri string, r role) (*endpoint, error) {
	memBuffers.Lock()
	b := memBuffers.m[strings.TrimPrefix(uri, "mem://")]
	memBuffers.Unlock()
	ep := &endpoint{path: uri, role: r, exists: true}
	if b == nil {
		return ep, refuse(KindNotFound, uri, "no such buffer").on(r.field())
	}
	ep.end = &memEnd{ep: ep, buf: b}
	ep.geo = align.Geometry{Path: uri, Size: b.size(), MemAlign: 1, OffsetAlign: 1, WriteZeroesMax: 1 << 30}
	ep.endFacts = endFacts{what: "memory buffer", fixedSize: true, ownIO: true, maxRequest: b.max}
	return ep, nil
}

func (m *memEnd) checkAlone(*Plan) error { return nil }

// check refuses resuming from a buffer: nothing says it did not change.
func (m *memEnd) check(p *Plan) error {
	if m.ep.role == roleSrc && p.opts.Resume {
		return refuse(KindNotSupported, m.ep.path, "Options.Resume cannot resume from a memory buffer").on("Resume")
	}
	return nil
}

func (m *memEnd) same(o *endpoint) (bool, string) {
	n, ok := o.end.(*memEnd)
	return ok && n.buf == m.buf, "the same memory buffer"
}

func (m *memEnd) overlap(byteRange, *endpoint, byteRange) *overlap { return nil }
func (m *memEnd) directObstacle(*Plan, int64) string               { return "" }
func (m *memEnd) uringObstacle(string) string                      { return "" }
func (m *memEnd) space(*Plan) (dstSpace, bool)                     { return dstSpace{}, false }
func (m *memEnd) close() error                                     { return nil }

func (m *memEnd) identity() (identity, error) {
	return identity{Path: m.ep.path, Kind: m.ep.what, Size: m.buf.size()}, nil
}

func (m *memEnd) srcData(p *Plan) (srcData, error) {
	return srcData{ext: guard.Extents{{Off: p.opts.SrcOffset, N: p.Length}}, read: m.buf}, nil
}

func (m *memEnd) open(*Plan, *Report) (*held, error) {
	return &held{io: &memIO{name: m.ep.path, store: m.buf, size: m.buf.size()}, align: 1}, nil
}

func (m *memEnd) lock(*Plan, *held, *Report) error { return nil }

func (m *memEnd) openDst(p *Plan, rep *Report) (target, error) {
	h, err := m.open(p, rep)
	return &memTarget{end: m, h: h}, err
}

// memTarget is a buffer DST: written in place, never cut.
type memTarget struct {
	end    *memEnd
	h      *held
	keepIt bool
}

func (t *memTarget) held() *held                      { return t.h }
func (t *memTarget) shape(*Plan, *engine.Job)         {}
func (t *memTarget) cut(*Plan) error                  { return nil }
func (t *memTarget) publish(*Plan, bool) error        { return nil }
func (t *memTarget) discard() bool                    { return false }
func (t *memTarget) readBack(*Plan) (string, error)   { return "from memory", nil }
func (t *memTarget) identity(*Plan) (identity, error) { return t.end.identity() }
func (t *memTarget) keep(on bool)                     { t.keepIt = on }
func (t *memTarget) kept() bool                       { return t.keepIt }
func (t *memTarget) release()                         {}
func (t *memTarget) left(p *Plan, rep *Report) DstState {
	if !rep.Synced && !p.opts.NoSync {
		return DstUnknown
	}
	return DstPartial
}

// memBytes is a buffer of a fixed size, safe for concurrent use; max,
// when positive, is the most one request may move (more is EINVAL).
type memBytes struct {
	mu  sync.RWMutex
	b   []byte
	max int
}

func (m *memBytes) size() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.b))
}

func (m *memBytes) ReadAt(p []byte, off int64) (int, error) {
	if m.max > 0 && len(p) > m.max {
		return 0, syscall.EINVAL
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	return copy(p, m.b[off:]), nil
}

func (m *memBytes) WriteAt(p []byte, off int64) (int, error) {
	if m.max > 0 && len(p) > m.max {
		return 0, syscall.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if off+int64(len(p)) > int64(len(m.b)) {
		return 0, syscall.ENOSPC
	}
	return copy(m.b[off:], p), nil
}

// memIO is the engine.IOEnd of a buffer, or of any store that reads and
// writes at offsets (the engine suite gives it a file), with a map of
// where its data is when the store knows (nil: all of it is data).
type memIO struct {
	name  string
	store interface {
		io.ReaderAt
		io.WriterAt
	}
	size    int64
	data    guard.Extents
	flushes int
}

var _ engine.IOEnd = (*memIO)(nil)

func (m *memIO) Name() string                             { return m.name }
func (m *memIO) ReadAt(p []byte, off int64) (int, error)  { return m.store.ReadAt(p, off) }
func (m *memIO) WriteAt(p []byte, off int64) (int, error) { return m.store.WriteAt(p, off) }
func (m *memIO) Flush() error                             { m.flushes++; return nil }
func (m *memIO) Settle() error                            { return nil }
func (m *memIO) Reserve(int64, int64, bool) error         { return syscall.EOPNOTSUPP }
func (m *memIO) Truncate(int64) error                     { return syscall.EOPNOTSUPP }
func (m *memIO) PrepareTail() error                       { return nil }
func (m *memIO) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "mem", Detail: fmt.Sprintf("%s, %d bytes", m.name, m.size)}
}

// Zero writes zeros.
func (m *memIO) Zero(off, n int64, punch bool) error {
	zeros := make([]byte, min(n, 1<<20))
	for n > 0 {
		k, err := m.store.WriteAt(zeros[:min(n, int64(len(zeros)))], off)
		if err != nil {
			return err
		}
		off, n = off+int64(k), n-int64(k)
	}
	return nil
}

// Data answers from the map: the first run of data at or after off.
func (m *memIO) Data(off, end int64) (int64, int64, error) {
	if m.data == nil {
		return off, end, nil
	}
	for _, e := range m.data {
		if e.Off+e.N > off && e.Off < end {
			return max(e.Off, off), min(e.Off+e.N, end), nil
		}
	}
	return end, end, nil
}

// TestMemKindEngineSuite runs the engine's suite on the pool with memory
// ends: every SRC in memory (its holes mapped as the file's were), and
// each DST the suite may give a fixed size through its file.
func TestMemKindEngineSuite(t *testing.T) {
	var n memServed
	enginetest.RunTarget(t, enginetest.Target{New: fallback.New, Serve: n.serve})
	t.Logf("served %d SRCs, %d DSTs", n.src, n.dst)
	if n.src < 100 || n.dst < 20 {
		t.Errorf("served %d SRCs and %d DSTs: the suite did not run on memory ends", n.src, n.dst)
	}
}

type memServed struct {
	mu       sync.Mutex
	src, dst int
}

// serve puts SRC in memory, and DST behind a memIO on its file when the
// job leaves its size alone and the file already holds the range.
func (n *memServed) serve(t testing.TB, job *engine.Job) {
	t.Helper()
	src := job.Files[engine.FileSrc].Name()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	job.Ends[engine.FileSrc] = &memIO{name: "mem:" + src, store: &memBytes{b: b}, size: int64(len(b)), data: extentsOf(t, src)}
	job.Files[engine.FileSrc] = nil
	n.count(&n.src)
	dst := job.Files[engine.FileDst]
	if dst == nil || job.CutBackOnStop || job.FinalSize > 0 {
		return
	}
	fi, err := os.Stat(dst.Name())
	if err != nil || fi.Size() < job.DstOff+job.Length {
		return
	}
	f, err := os.OpenFile(dst.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	job.Ends[engine.FileDst] = &memIO{name: "mem:" + dst.Name(), store: f, size: fi.Size()}
	job.Files[engine.FileDst] = nil
	n.count(&n.dst)
}

func (n *memServed) count(c *int) {
	n.mu.Lock()
	*c++
	n.mu.Unlock()
}

// extentsOf maps a file's data with SEEK_DATA/SEEK_HOLE.
func extentsOf(t testing.TB, path string) guard.Extents {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out := guard.Extents{}
	for off := int64(0); off < fi.Size(); {
		start, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			break // ENXIO: no data after off
		}
		stop, err := unix.Seek(int(f.Fd()), start, unix.SEEK_HOLE)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, guard.Extent{Off: start, N: stop - start})
		off = stop
	}
	return out
}

// TestMemKindCopy copies between memory buffers and files through the
// registry: Prepare finds the kind by the operand's scheme, and a copy,
// its read-back verification, a checksum and a compare run on it as on
// any end, with the engine reported by the buffer's transport.
func TestMemKindCopy(t *testing.T) {
	data := enginetest.RandomBytes(9<<20+4097, 5)
	copy(data[3<<20:], make([]byte, 2<<20)) // zeros, which a DST need not get as data
	src := memBuffer(t, "src", slices.Clone(data))
	dst := memBuffer(t, "dst", make([]byte, len(data)+12345))
	rep, err := Copy(context.Background(), Options{Src: src, Dst: dst, Verify: true, Checksum: newCellSums})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != "mem" || rep.DstState != DstComplete || !rep.Synced || rep.Verify == nil || rep.Verify.How != "from memory" {
		t.Fatalf("report %+v: want engine mem, complete, synced, read back from memory", rep)
	}
	memBuffers.Lock()
	got := memBuffers.m["dst"].b
	memBuffers.Unlock()
	if !slices.Equal(got[:len(data)], data) {
		t.Fatal("DST differs from SRC")
	}
	file := filepath.Join(t.TempDir(), "file")
	if _, err := Copy(context.Background(), Options{Src: src, Dst: file}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !slices.Equal(b, data) {
		t.Fatalf("mem -> file: %v, or the file differs", err)
	}
	// The checksum of the buffer is the file's.
	sum, err := Checksum(context.Background(), ReadOptions{Src: src, Sum: newCellSums})
	if err != nil {
		t.Fatal(err)
	}
	fileSum, err := Checksum(context.Background(), ReadOptions{Src: file, Sum: newCellSums})
	if err != nil || sum.Checksum.Checksum != fileSum.Checksum.Checksum || *rep.Checksum != *sum.Checksum {
		t.Fatalf("checksums: copy %v, buffer %v, file %v (%v)", rep.Checksum, sum.Checksum, fileSum.Checksum, err)
	}
	if _, err := Compare(context.Background(), ReadOptions{Src: file, Dst: dst, LengthSet: true, Length: int64(len(data))}); err != nil {
		t.Fatalf("compare file with buffer: %v", err)
	}
	memBuffers.Lock()
	memBuffers.m["dst"].b[5<<20+7] ^= 1
	memBuffers.Unlock()
	_, err = Compare(context.Background(), ReadOptions{Src: src, Dst: dst, LengthSet: true, Length: int64(len(data))})
	var mm *MismatchError
	if !errors.As(err, &mm) || mm.Offset != 5<<20+7 {
		t.Fatalf("compare after a byte changed: %v, want a mismatch at %d", err, 5<<20+7)
	}
}

// TestMemKindMaxRequest: a kind that takes at most so much in one
// request gets blocks no larger, asked or not, and a verification that
// needs larger ones is refused.
func TestMemKindMaxRequest(t *testing.T) {
	data := enginetest.RandomBytes(3<<20+5, 6)
	src := memBuffer(t, "capped", slices.Clone(data), 256<<10)
	file := filepath.Join(t.TempDir(), "file")
	for _, bs := range []int{0, 4 << 20} {
		p, err := Prepare(Options{Src: src, Dst: file, BlockSize: bs})
		if err != nil {
			t.Fatal(err)
		}
		if p.BlockSize > 256<<10 {
			t.Fatalf("asked %d: block size %d over the end's most, 256 KiB", bs, p.BlockSize)
		}
		if _, err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(file); err != nil || !slices.Equal(b, data) {
			t.Fatalf("asked %d: %v, or the copy differs", bs, err)
		}
	}
	_, err := Prepare(Options{Src: src, Dst: file, Verify: true})
	var re *RefusedError
	if !errors.As(err, &re) || re.Kind != KindNotSupported {
		t.Fatalf("verify over an end of 256 KiB requests: %v; want a refusal", err)
	}
}

// TestMemKindRefusals: what a kind refuses and what the registry and
// Prepare refuse for every kind: a buffer that is not there, the same
// buffer at both ends, a range past a fixed-size DST, resuming from it.
func TestMemKindRefusals(t *testing.T) {
	src := memBuffer(t, "a", make([]byte, 1<<20))
	small := memBuffer(t, "small", make([]byte, 4096))
	cases := []struct {
		opts Options
		kind Kind
		want string
	}{
		{Options{Src: "mem://missing", Dst: small}, KindNotFound, "no such buffer"},
		{Options{Src: src, Dst: src}, KindOverlap, "the same memory buffer"},
		{Options{Src: src, Dst: small}, KindTooSmall, "memory buffer too small"},
		{Options{Src: src, Dst: small, Resume: true, StatePath: filepath.Join(t.TempDir(), "state")}, KindNotSupported, "cannot resume from a memory buffer"},
		{Options{Src: small, Dst: src, Resume: true}, KindBadInput, "needs a state file path"},
	}
	for _, c := range cases {
		_, err := Prepare(c.opts)
		var re *RefusedError
		if !errors.As(err, &re) || re.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v, want %s: %q", c.opts.Src, c.opts.Dst, err, c.kind, c.want)
		}
	}
}
