package inflate

import (
	"bytes"
	"encoding/hex"
	"os/exec"
	"strconv"
	"testing"
)

// zlibDecode decodes src into size bytes as QEMU's qcow2_zlib_decompress
// does (one inflate call with Z_FINISH over the whole output; Z_BUF_ERROR
// with the output full is success), with this machine's zlib through
// python3. windowBits -15 rather than QEMU's -12: in one call zlib reads
// matches from the output itself, whatever its window.
func zlibDecode(t *testing.T, size int, src []byte) ([]byte, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (for zlib) is not installed")
	}
	script := `import sys,zlib
try:
    o=zlib.decompressobj(-15).decompress(bytes.fromhex(sys.argv[1]),int(sys.argv[2]))
    sys.stdout.write(o.hex() if len(o)==int(sys.argv[2]) else "fail")
except zlib.error: sys.stdout.write("fail")`
	out, err := exec.Command(py, "-c", script, hex.EncodeToString(src), strconv.Itoa(size)).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	if string(out) == "fail" {
		return nil, false
	}
	b, err := hex.DecodeString(string(out))
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// TestAgreesWithZlib: zlib, once the output is full, still reads up to
// the next literal or match (a block's end, the next block's header), and
// checks a dynamic header for an end-of-block code and a complete
// code-length code; QEMU then fails the cluster. Decode must fail exactly
// where zlib does, and give zlib's bytes where it succeeds.
func TestAgreesWithZlib(t *testing.T) {
	a := uint32('a')
	fixed := func(final uint32) *bitWriter { return (&bitWriter{}).field(final, 1).field(1, 2) }
	// Pre lengths in preOrder: 18 of one bit, 0 and 1 of two.
	noEnd := dynamic(0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)
	noEnd.code(0, 1).field(86, 7).code(3, 2).code(3, 2).code(0, 1).field(127, 7).code(0, 1).field(9, 7).code(2, 2)
	noEnd.code(0, 1).code(0, 1)
	cases := []struct {
		name string
		src  []byte
		size int
	}{
		{"a literal fills it, then symbol 286", fixed(1).fixedSym(a).fixedSym(286).b, 1},
		{"a match fills it, then symbol 287", fixed(1).fixedSym(a).fixedSym(258).code(0, 5).fixedSym(287).b, 5},
		{"a match fills it, then distance 30", fixed(1).fixedSym(a).fixedSym(258).code(0, 5).fixedSym(257).code(30, 5).b, 5},
		{"a match cut by the end, then symbol 286", fixed(1).fixedSym(a).fixedSym(258).code(0, 5).fixedSym(286).b, 3},
		{"a block fills it, then block type 3", fixed(0).fixedSym(a).fixedSym(256).field(6, 3).b, 1},
		{"a block fills it, then a stored length that disagrees", append(fixed(0).fixedSym(a).fixedSym(256).field(0, 3).b, 1, 0, 1, 0), 1},
		{"a block fills it, then an empty stored block and type 3", append(fixed(0).fixedSym(a).fixedSym(256).field(0, 3).b, 0, 0, 0xff, 0xff, 0x07), 1},
		{"a block fills it, then a cut header", fixed(0).fixedSym(a).fixedSym(256).field(0, 1).b, 1},
		{"a literal fills it, then the input ends", fixed(1).fixedSym(a).b, 1},
		{"a literal fills it, then the last block ends", fixed(1).fixedSym(a).fixedSym(256).b, 1},
		{"a literal fills it, then a length whose distance is cut", fixed(1).fixedSym(a).fixedSym(257).field(0, 2).b, 1},
		{"a dynamic block with no end-of-block code", noEnd.b, 2},
		{"a code-length code of one code", dynamic(0, 0, 0, 0, 1).code(0, 1).b, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, ok := zlibDecode(t, c.size, c.src)
			dst := make([]byte, c.size)
			err := Decode(dst, c.src)
			if (err == nil) != ok {
				t.Fatalf("Decode says %v, zlib succeeds: %v", err, ok)
			}
			if ok && !bytes.Equal(dst, want) {
				t.Fatalf("Decode gives %x, zlib %x", dst, want)
			}
		})
	}
}
