package blkhash

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Known answers from imageio's own tests (test/blkhash_test.py): a file
// that starts with "data" and is zeros up to its size, and ten blocks
// that start with "00\n" ... "09\n".
func TestImageioKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		size int64
		want string
	}{
		{0, "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
		{3 << 20, "42f3b76772a6d3dcffae2a24697721687975e2c60ddfd4ba7831ea9ce772ca71"},
		{4 << 20, "f426bb2cf1e1901fe4e87423950944ecfed6d9d18a09e6e802aa4912e1c9b2d6"},
		{5 << 20, "0da53b583fc1fbbac7edea14454c79f84a8107613e614f2c7a47071dfdcf41a6"},
	} {
		img := make([]byte, c.size)
		copy(img, "data")
		if got := hashAll(t, img, 1); got.Checksum != c.want {
			t.Errorf("size %d: %s, want %s", c.size, got.Checksum, c.want)
		}
	}
	img := make([]byte, 10*BlockSize)
	for i := range 10 {
		copy(img[i*BlockSize:], fmt.Sprintf("%02d\n", i))
	}
	if got := hashAll(t, img, 3); got.Checksum != "7934079f80b53142d738d2bb7efaedf696a3d34d76a7865a24130bc7b4a7acfe" {
		t.Errorf("ten blocks: %s", got.Checksum)
	}
}

// hashAll hands img to a Hasher block by block in a shuffled order, zero
// blocks as zero ranges, and returns the result.
func hashAll(t *testing.T, img []byte, seed uint64) Result {
	t.Helper()
	size := int64(len(img))
	h := NewHasher(size, 0)
	order := rand.New(rand.NewPCG(seed, 1)).Perm(int(Blocks(size)))
	for _, i := range order {
		off := int64(i) * BlockSize
		b := img[off:min(size, off+BlockSize)]
		if seed%2 == 0 && zeros.Is(b) {
			h.Zero(off, int64(len(b)))
			continue
		}
		h.Data(off, b)
	}
	r, err := h.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.Algorithm != "blake2b" || r.BlockSize != 4194304 {
		t.Fatalf("result %+v: want blake2b and 4194304", r)
	}
	return r
}

// pythonChecksum is an independent implementation, written from imageio's
// description rather than from this package: 4 MiB blocks, the last one
// as it is, BLAKE2b-256 of each, their raw digests into an outer
// BLAKE2b-256.
const pythonChecksum = `
import hashlib, sys
outer = hashlib.blake2b(digest_size=32)
with open(sys.argv[1], "rb") as f:
    while True:
        block = f.read(4 * 1024 * 1024)
        if not block:
            break
        outer.update(hashlib.blake2b(block, digest_size=32).digest())
print(outer.hexdigest())
`

// PythonSum runs the independent implementation on a file.
func PythonSum(t testing.TB, path string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	out, err := exec.Command(py, "-c", pythonChecksum, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestAgainstPython: odd sizes, zero blocks, zero runs inside data, a short
// last block of data and of zeros, given in any order.
func TestAgainstPython(t *testing.T) {
	sizes := []int64{0, 1, 511, 4097, BlockSize - 1, BlockSize, BlockSize + 1, 3*BlockSize + 12345, 5 * BlockSize}
	for i, size := range sizes {
		rng := rand.New(rand.NewPCG(uint64(i), 2))
		img := make([]byte, size)
		for off := int64(0); off < size; off += BlockSize / 2 {
			if rng.IntN(3) > 0 { // a third of the half blocks stay zeros
				end := min(size, off+BlockSize/2)
				for j := off; j < end; j += 8 {
					img[j] = byte(rng.Uint32())
				}
			}
		}
		path := filepath.Join(t.TempDir(), "img")
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		want := PythonSum(t, path)
		for seed := uint64(1); seed <= 2; seed++ {
			if got := hashAll(t, img, seed+uint64(i)*2); got.Checksum != want {
				t.Errorf("size %d, seed %d: %s, python says %s", size, seed, got.Checksum, want)
			}
		}
	}
}

// TestZeroDigest: the constant is what hashing the zeros gives, for a
// whole block and a short one.
func TestZeroDigest(t *testing.T) {
	for _, n := range []int{0, 1, 4097, BlockSize - 1, BlockSize} {
		if ZeroDigest(n) != BlockDigest(make([]byte, n)) {
			t.Errorf("ZeroDigest(%d) differs from the digest of %d zeros", n, n)
		}
	}
}

// TestMisuse: a missing block, a block given twice, data that does not
// start on a block fail the result instead of giving a wrong checksum.
func TestMisuse(t *testing.T) {
	data := bytes.Repeat([]byte{1}, BlockSize)
	cases := map[string]func(h *Hasher){
		"missing":   func(h *Hasher) { h.Data(0, data) },
		"twice":     func(h *Hasher) { h.Data(0, data); h.Data(0, data); h.Zero(BlockSize, BlockSize) },
		"unaligned": func(h *Hasher) { h.Data(4096, data[:BlockSize-4096]); h.Zero(BlockSize, BlockSize) },
		"past end":  func(h *Hasher) { h.Data(0, data); h.Zero(BlockSize, 2*BlockSize) },
	}
	for name, feed := range cases {
		h := NewHasher(2*BlockSize, 2)
		feed(h)
		if r, err := h.Result(); err == nil {
			t.Errorf("%s: result %s, want an error", name, r.Checksum)
		}
	}
}
