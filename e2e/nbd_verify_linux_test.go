package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// --verify with NBD ends: an export DST is read back from its server
// after FLUSH; an export SRC's digests come from the copy's own reads.

// TestNBDVerify: file to export, export to file and export to export,
// each with --verify, at an awkward size with a zero run: exit 0, the
// verification reported ok with how DST was read, every byte equal.
func TestNBDVerify(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size = 9<<20 + 12345
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := enginetest.RandomBytes(size, 31)
	clear(data[4<<20 : 5<<20]) // a zero run: written as zeros, read back as zeros
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := memory(t, nbdtest.Unix, size), memory(t, nbdtest.TCP, size)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name, from, to, read string
	}{
		{"file to export", src, a, "from the NBD server, after FLUSH"},
		{"export to file", a, out, "O_DIRECT"},
		{"export to export", a, b, "from the NBD server, after FLUSH"},
	} {
		rep := jsonCopy(t, "--verify", c.from, c.to)
		v, _ := rep["verify"].(map[string]any)
		if v["result"] != "ok" || v["read"] != c.read || v["bytes"] != float64(size) {
			t.Errorf("%s: verify %v: want ok, %d bytes, read %q", c.name, v, size, c.read)
		}
	}
	sameBytes(t, "export a", exportBytes(t, a), data)
	sameBytes(t, "export b", exportBytes(t, b), data)
	sameFile(t, "file from export", out, data)
}

// TestNBDVerifyFindsLoss: nbdkit's null plugin takes every write and
// keeps nothing (it reads zeros), as a broken server or storage would.
// The copy itself succeeds; --verify reads DST back, exits 3, and names
// SRC's first non-zero byte and every bad 4 MiB block.
func TestNBDVerifyFindsLoss(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size, first = 9 << 20, 4096 + 7
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := enginetest.RandomBytes(size, 32)
	clear(data[:first])
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	null := nbdtest.Nbdkit(t, nbdtest.Unix, "null", fmt.Sprint("size=", size)).URI
	r := cli(t, "--verify", "--progress", "none", src, null)
	r.want(t, exitMismatch, fmt.Sprintf("differs from SRC at offset %d", first), "3 of 3 blocks", "does not read back as SRC: do not use it")
	r = cli(t, "--verify", "--json", "--progress", "none", src, null)
	r.want(t, exitMismatch)
	var j struct {
		DstState string `json:"dst_state"`
		Verify   jsonVerify
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	if j.DstState != "mismatch" || j.Verify.FirstBadOffset != first || j.Verify.BadBlocks != 3 || !strings.Contains(j.Verify.Read, "NBD server") {
		t.Errorf("--json: %+v", j)
	}
}
