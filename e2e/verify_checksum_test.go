package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/blkhash"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// pythonChecksum is an independent implementation of the imageio
// checksum, written from its description (4 MiB blocks, the last one as
// it is, BLAKE2b-256 of each, their raw digests into an outer
// BLAKE2b-256), over length bytes of a file from offset.
const pythonChecksum = `
import hashlib, sys
path, off, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
outer = hashlib.blake2b(digest_size=32)
with open(path, "rb") as f:
    f.seek(off)
    while length > 0:
        block = f.read(min(length, 4 * 1024 * 1024))
        if not block:
            raise SystemExit("short file")
        outer.update(hashlib.blake2b(block, digest_size=32).digest())
        length -= len(block)
print('{"algorithm": "blake2b", "block_size": 4194304, "checksum": "%s"}' % outer.hexdigest())
`

func pythonSum(t *testing.T, path string, off, length int64) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	out, err := exec.Command(py, "-c", pythonChecksum, path, strconv.FormatInt(off, 10), strconv.FormatInt(length, 10)).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// checksumImage writes a sparse image: data, a hole, written zeros (a
// whole 4 MiB block of them and more), data again, a short last block.
func checksumImage(t *testing.T, path string, size int64, seed uint64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range [][2]int64{{0, 3<<20 + 5}, {13 << 20, 1 << 20}, {20<<20 + 77, 2 << 20}} {
		if p[0] >= size {
			continue
		}
		n := min(p[1], size-p[0])
		if _, err := f.WriteAt(randomBytesFor(n, seed+uint64(p[0])), p[0]); err != nil {
			t.Fatal(err)
		}
	}
	if size > 8<<20 {
		f.WriteAt(make([]byte, 5<<20), 7<<20) // zeros written as data
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

func randomBytesFor(n int64, seed uint64) []byte { return enginetest.RandomBytes(n, seed) }

// TestChecksumCommand: ringcp checksum prints exactly what the independent
// implementation prints, for odd sizes, holes, zero blocks and a short
// last block, a range, with both engines, buffered and direct.
func TestChecksumCommand(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	for _, size := range []int64{0, 1, 4097, 4<<20 - 1, 4 << 20, 25<<20 + 12345} {
		path := filepath.Join(dir, fmt.Sprint("img", size))
		checksumImage(t, path, size, uint64(size))
		want := pythonSum(t, path, 0, size)
		for _, eng := range []string{"uring", "pool"} {
			for _, direct := range []string{"auto", "never"} {
				r := cli(t, "checksum", "--engine", eng, "--direct", direct, path)
				r.want(t, 0)
				if got := strings.TrimSpace(r.stdout); got != want {
					t.Errorf("size %d, %s, direct %s: %s, python says %s", size, eng, direct, got, want)
				}
			}
		}
	}
	path := filepath.Join(dir, fmt.Sprint("img", 25<<20+12345))
	r := cli(t, "checksum", "--src-offset", "4M", "--length", "13631489", path)
	r.want(t, 0)
	if got, want := strings.TrimSpace(r.stdout), pythonSum(t, path, 4<<20, 13631489); got != want {
		t.Errorf("range: %s, python says %s", got, want)
	}
	cli(t, "checksum", "--length", "1G", path).want(t, 2, "runs past the end")
	cli(t, "checksum", path, path).want(t, 2, "need 1 operand(s), got 2")
}

// TestChecksumDevice: a loop device's checksum is its backing file's.
func TestChecksumDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	uringtest.NeedOn(t)
	back := blocktest.SparseFile(t, 17<<20)
	checksumImage(t, back, 17<<20, 9)
	dev := blocktest.Loop(t, back, "--direct-io=on")
	want := pythonSum(t, back, 0, 17<<20)
	for _, eng := range []string{"uring", "pool"} {
		r := cli(t, "checksum", "--engine", eng, dev)
		r.want(t, 0)
		if got := strings.TrimSpace(r.stdout); got != want {
			t.Errorf("%s: %s, want %s", eng, got, want)
		}
	}
}

// TestCopyChecksum: --checksum during a copy gives SRC's checksum from
// the data the copy read, in the summary and in --json.
func TestCopyChecksum(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	const size = 25<<20 + 12345
	checksumImage(t, src, size, 4)
	var want struct{ Checksum string }
	json.Unmarshal([]byte(pythonSum(t, src, 0, size)), &want)
	for _, eng := range []string{"uring", "pool"} {
		dst := filepath.Join(dir, "dst-"+eng)
		r := cli(t, "--checksum", "--engine", eng, src, dst)
		r.want(t, 0, "ringcp: checksum of SRC (blake2b, block size 4194304): "+want.Checksum)
		os.Remove(dst)
		r = cli(t, "--checksum", "--verify", "--json", "--engine", eng, src, dst)
		r.want(t, 0)
		var got struct {
			Checksum map[string]any
			Verify   map[string]any
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		if got.Checksum["checksum"] != want.Checksum || got.Checksum["algorithm"] != "blake2b" || got.Checksum["block_size"] != float64(4194304) {
			t.Errorf("%s: --json checksum %v, want %s", eng, got.Checksum, want.Checksum)
		}
		if got.Verify["result"] != "ok" || got.Verify["bytes"] != float64(size) || got.Verify["first_bad_offset"] != float64(-1) {
			t.Errorf("%s: --json verify %v", eng, got.Verify)
		}
	}
}

// TestVerifyCommand: ringcp verify says equal (exit 0) or names the first
// differing byte (exit 3), for a changed byte, a shorter and a longer DST,
// ranges, and an image on a longer device.
func TestVerifyCommand(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	data := randomFile(t, a, 9<<20+333, 7)
	for _, eng := range []string{"uring", "pool"} {
		os.WriteFile(b, data, 0o644)
		cli(t, "verify", "--engine", eng, a, b).want(t, 0, "are equal")
		changed := bytes.Clone(data)
		changed[6<<20+5] ^= 4
		changed[8<<20+1] ^= 4
		os.WriteFile(b, changed, 0o644)
		r := cli(t, "verify", "--json", "--engine", eng, a, b)
		r.want(t, 3, "differ at offset 6291461 of SRC (offset 6291461 of DST): 2 of 3 blocks")
		var j jsonCompare
		if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Equal || j.FirstBadOffset != 6<<20+5 || j.BadBlocks != 2 {
			t.Errorf("%s: --json %+v (%v)", eng, j, err)
		}
		cli(t, "verify", "--engine", eng, "--length", "6M", a, b).want(t, 0, "are equal")
		cli(t, "verify", "--engine", eng, "--src-offset", "8M", "--dst-offset", "8M", "--length", "2", a, b).want(t, 3, "differ at offset 8388609")
		os.WriteFile(b, data[:5<<20], 0o644)
		cli(t, "verify", "--engine", eng, a, b).want(t, 3, "differ at offset 5242880 of SRC", "SRC's range holds 9437517 bytes, DST 5242880")
		os.WriteFile(b, append(bytes.Clone(data), 0), 0o644)
		cli(t, "verify", "--engine", eng, a, b).want(t, 3, "differ at offset 9437517")
	}
	cli(t, "verify", a).want(t, 2, "need 2 operand(s)")
	cli(t, "verify", a, filepath.Join(dir, "none")).want(t, 2, "no such file")
}

// TestVerifyCommandDevice: an image on a longer loop device is equal for
// the image's length.
func TestVerifyCommandDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	dev, back := blocktest.Device(t, 16<<20, "--direct-io=on")
	img := filepath.Join(t.TempDir(), "img")
	data := randomFile(t, img, 5<<20+512, 8)
	f, err := os.OpenFile(back, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(data, 0)
	f.Close()
	cli(t, "verify", img, dev).want(t, 0, "are equal")
	cli(t, "verify", dev, img).want(t, 3, "differ at offset 5243392 of SRC")
}

// TestCopyVerifyMismatchExit: a copy onto a filesystem that silently
// corrupts a byte exits 3, and says where on stderr and in --json.
func TestCopyVerifyMismatchExit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultfs mounts with mount(2) here: needs root")
	}
	back := t.TempDir()
	randomFile(t, filepath.Join(back, "src"), 10<<20, 3)
	randomFile(t, filepath.Join(back, "dst"), 10<<20, 4)
	const at = 9<<20 + 17
	fs := faultfs.MountWith(t, back, faultfs.Options{Faults: []faultfs.Fault{{Op: faultfs.OpCorrupt, Offset: at, Name: "dst"}}})
	r := cli(t, "--verify", fs.Path("src"), fs.Path("dst"))
	r.want(t, 3, fmt.Sprintf("verify: %s differs from SRC at offset %d", fs.Path("dst"), at), "1 of 3 blocks", "does not read back as SRC: do not use it")
	r = cli(t, "--verify", "--json", fs.Path("src"), fs.Path("dst"))
	r.want(t, 3)
	var j struct {
		DstState string     `json:"dst_state"`
		Error    *jsonError `json:"error"`
		Verify   jsonVerify
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	if j.DstState != "mismatch" || j.Verify.Result != "mismatch" || j.Verify.FirstBadOffset != at || j.Verify.BadBlocks != 1 || j.Verify.BlockSize != copier.CellSize || j.Error == nil || j.Error.Kind != "mismatch" || !strings.Contains(j.Error.Message, "differs from SRC") {
		t.Errorf("--json: %+v", j)
	}
}

// TestTrustRefusals: what --verify, --checksum and --resume cannot do is
// refused before anything is written.
func TestTrustRefusals(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	randomFile(t, src, 1<<20, 1)
	randomFile(t, dst, 1<<20, 2)
	before := snap(t, dst)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--verify", "--sync", "none"}, "need the fdatasync barrier"},
		{[]string{"--resume", "--sync", "none"}, "need the fdatasync barrier"},
		{[]string{"--checksum", "--offload", "reflink"}, "offload reflink: the data would not pass through ringcp"},
		{[]string{"--state", filepath.Join(dir, "s")}, "--state is for --resume: give it too"},
		{[]string{"--sync-every", "1s"}, "--sync-every is for --resume: give it too"},
		{[]string{"--resume", "--sync-every", "-1s"}, "--sync-every -1s: must not be negative"},
		{[]string{"--resume", "--sync-every", "0s"}, `"--sync-every" flag: must be more than 0`},
	} {
		cli(t, append(c.args, src, dst)...).want(t, 2, c.want)
		before.Same(t)
	}
	mustNotExist(t, dst+".ringcp-state")
	mustNotExist(t, filepath.Join(dir, "s"))
}

// TestChecksumBlockSize: copier's cells are imageio's blocks.
func TestChecksumBlockSize(t *testing.T) {
	if copier.CellSize != blkhash.BlockSize {
		t.Fatalf("copier.CellSize %d, blkhash.BlockSize %d: the checksum blocks and the engine's grid differ", copier.CellSize, blkhash.BlockSize)
	}
}
