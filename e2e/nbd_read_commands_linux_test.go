package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/internal/schematest"
)

// TestReadCommandsOverNBD: `ringcp checksum` and `ringcp verify` read NBD
// exports (imageio's main use is checksumming an export), with the same
// results as on the file the export serves: the checksum, a range's
// checksum, equal, and a difference named at its byte. Before, an NBD URI
// was refused as a missing file.
func TestReadCommandsOverNBD(t *testing.T) {
	nbdtest.Need(t, "nbdkit", "qemu-nbd")
	const size = 9<<20 + 25*512 // qemu-nbd serves whole 512-byte sectors; the range below is odd
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := enginetest.RandomBytes(size, 41)
	clear(data[4<<20 : 6<<20]) // zeros a server may call a hole
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := schematest.Output(t)
	local := checksumOf(t, s, src)
	ranged := checksumOf(t, s, "--src-offset", "4096", "--length", "5000001", src)
	exports := map[string]string{
		"nbdkit file": nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "file", src).URI,
		"qemu-nbd":    nbdtest.QemuNBD(t, nbdtest.TCP, "raw", src, "--read-only").URI,
	}
	other := filepath.Join(dir, "other")
	changed := append([]byte(nil), data...)
	changed[7<<20+3] ^= 1
	if err := os.WriteFile(other, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, uri := range exports {
		if got := checksumOf(t, s, uri); got != local {
			t.Errorf("%s: checksum %s, the file's %s", name, got, local)
		}
		if got := checksumOf(t, s, "--src-offset", "4096", "--length", "5000001", uri); got != ranged {
			t.Errorf("%s: range checksum %s, the file's %s", name, got, ranged)
		}
		r := cli(t, "verify", "--json", uri, src)
		r.want(t, 0, "are equal")
		if got := s.Check(t, []byte(r.stdout)); got["equal"] != true || got["engine"] != "nbd" {
			t.Errorf("%s: verify %v", name, r.stdout)
		}
		r = cli(t, "verify", "--json", src, uri) // the export as DST
		r.want(t, 0, "are equal")
		r = cli(t, "verify", "--json", uri, other)
		r.want(t, 3, "differ at offset 7340035")
		got := s.Check(t, []byte(r.stdout))
		if n, _ := got["first_bad_offset"].(json.Number); n.String() != "7340035" || got["equal"] != false {
			t.Errorf("%s: mismatch object %s", name, r.stdout)
		}
	}
	sameFile(t, "SRC after the reads", src, data)
}

// checksumOf is `ringcp checksum --json ARGS`'s checksum, the object
// checked against the schema, and the same as the plain command prints.
func checksumOf(t *testing.T, s *schematest.Schema, args ...string) string {
	t.Helper()
	r := cli(t, append([]string{"checksum", "--json"}, args...)...)
	r.want(t, 0)
	got := s.Check(t, []byte(r.stdout))
	c, _ := got["checksum"].(map[string]any)
	sum, _ := c["checksum"].(string)
	plain := cli(t, append([]string{"checksum"}, args...)...)
	plain.want(t, 0)
	if !strings.Contains(plain.stdout, `"checksum": "`+sum+`"`) || sum == "" {
		t.Errorf("checksum %v: --json says %q, the plain command %s", args, sum, plain.stdout)
	}
	return sum
}
