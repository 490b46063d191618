package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// The kinds of export a copy meets: block size constraints, latency,
// sparse images, one that reads as zeros, and several connections.

// TestNBDBlockSizePolicy: an export whose server rejects any request not
// aligned to 4096 bytes or longer than 256 KiB (nbdkit's blocksize-policy
// filter with blocksize-error-policy=error): odd lengths in both
// directions, an odd tail written by read-modify-write, 8 MiB blocks split
// by the client.
func TestNBDBlockSizePolicy(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size = 3<<20 + 4097
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	data := randomFile(t, src, size, 12)
	policy := []string{"--filter=blocksize-policy", "blocksize-minimum=4096", "blocksize-preferred=65536",
		"blocksize-maximum=262144", "blocksize-error-policy=error"}
	old := enginetest.RandomBytes(4<<20, 13)
	dst := memory(t, nbdtest.Unix, 4<<20, policy...)
	fillExport(t, dst, old)
	r := cli(t, "-v", src, dst)
	r.want(t, exitOK, "block sizes 4096/65536/262144")
	want := append(append([]byte{}, data...), old[size:]...)
	sameBytes(t, "export after a copy into 4096-byte blocks", exportBytes(t, dst), want)

	jsonCopy(t, "--length", sizeArg(size), dst, out)
	sameFile(t, "file copied from an export of 4096-byte blocks", out, data)
}

// TestNBDDelay: 10 ms on every read and write (nbdkit's delay filter, as a
// network path would): copies in both directions are exact.
func TestNBDDelay(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size = 6<<20 + 511
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	data := randomFile(t, src, size, 14)
	dst := memory(t, nbdtest.TCP, size, "--filter=delay", "delay-read=10ms", "delay-write=10ms", "delay-zero=10ms")
	jsonCopy(t, "--block-size", "1M", src, dst)
	jsonCopy(t, "--block-size", "1M", dst, out)
	sameFile(t, "file copied through 10 ms of delay each way", out, data)
}

// TestNBDSparseRandom: nbdkit's sparse-random plugin, a disk image of
// scattered data runs: copied to a new file, the file matches what the
// export reads, its holes are mapped by block status and not read, and
// the file stays sparse.
func TestNBDSparseRandom(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	const size = 64 << 20
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "sparse-random", sizeArg(size), "seed=42", "percent=20", "runlength=1048576", "random-content=true").URI
	out := filepath.Join(t.TempDir(), "out")
	rep := jsonCopy(t, uri, out)
	sameFile(t, "file copied from sparse-random", out, exportBytes(t, uri))
	if holes := num(t, rep, "bytes_holes"); holes < size/2 {
		t.Errorf("holes %d of %d: block status must find most of the 80%% that is empty", holes, size)
	}
	if a := allocated(t, out); a > size/2 {
		t.Errorf("DST allocates %d of %d bytes: holes must stay holes", a, size)
	}
}

// TestNBDTargetIsZero: holes of SRC on an export known to read as zeros
// (a fresh nbdkit memory disk) are skipped with --target-is-zero, and
// zeroed otherwise; both copies are exact.
func TestNBDTargetIsZero(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src")
	want := sparseLayout(t, src)
	size := int64(len(want))
	for _, c := range []struct {
		flag   []string
		zeroed bool
	}{{[]string{"--target-is-zero"}, false}, {nil, true}} {
		dst := memory(t, nbdtest.Unix, size)
		rep := jsonCopy(t, append(c.flag, src, dst)...)
		sameBytes(t, "export after a sparse copy", exportBytes(t, dst), want)
		if z := num(t, rep, "bytes_zeroed"); (z > 0) != c.zeroed || num(t, rep, "bytes_holes")+z < 4<<20 {
			t.Errorf("%v: zeroed %d, holes %d: want the 4 MiB hole %s", c.flag, z, num(t, rep, "bytes_holes"),
				map[bool]string{true: "zeroed (WRITE_ZEROES)", false: "skipped"}[c.zeroed])
		}
	}
}

// TestNBDConnections: several connections where the server advertises
// CAN_MULTI_CONN (nbdkit's memory plugin), as many as asked; one where it
// does not (qemu-nbd for one client), with a note saying why.
func TestNBDConnections(t *testing.T) {
	nbdtest.Need(t, "nbdkit", "qemu-nbd")
	dir := t.TempDir()
	src, img := filepath.Join(dir, "src"), filepath.Join(dir, "img")
	data := randomFile(t, src, 17<<20+3, 15)
	randomFile(t, img, 18<<20, 16)
	multi := memory(t, nbdtest.TCP, 18<<20)
	// qemu-nbd for one client at a time advertises no CAN_MULTI_CONN.
	single := nbdtest.Start(t, nbdtest.Unix, "disk", "qemu-nbd", "--persistent", "-f", "raw", "-x", "disk", img).URI
	for _, c := range []struct {
		uri, conns, detail string
	}{{multi, "3", "over 3 connection(s)"}, {multi, "1", "over 1 connection(s)"}, {single, "4", "over 1 connection(s)"}} {
		r := cli(t, "-v", "--block-size", "1M", "--nbd-connections", c.conns, src, c.uri)
		r.want(t, exitOK, c.detail)
		if c.uri == single && !strings.Contains(r.stderr, "the server does not advertise CAN_MULTI_CONN") {
			t.Errorf("no note on why qemu-nbd got one connection:\n%s", r.stderr)
		}
		sameBytes(t, "export after a copy over "+c.conns+" connections", exportBytes(t, c.uri)[:len(data)], data)
	}
}

// TestNBDHoleNotZero: an extent the server calls a hole but not zero
// (unallocated, contents undefined: a thin device's discarded blocks) is
// data to copy; only extents that read as zeros are skipped. nbdkit's eval
// plugin serves a file and reports its extents so.
func TestNBDHoleNotZero(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	data := randomFile(t, src, 3<<20, 17)
	clear(data[2<<20:])
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "eval", "get_size=echo 3145728",
		"pread=dd if="+src+" iflag=skip_bytes,count_bytes skip=$4 count=$3 status=none",
		"can_extents=exit 0", "extents=echo 0 1M; echo 1M 1M hole; echo 2M 1M hole,zero").URI
	rep := jsonCopy(t, uri, out)
	sameFile(t, "file copied from an export with a hole that is not zero", out, data)
	if holes := num(t, rep, "bytes_holes"); holes != 1<<20 {
		t.Errorf("holes %d: want the 1 MiB that reads as zeros, and only it", holes)
	}
}

// TestNBDChecksum: --checksum on a copy from an export gives the oVirt
// imageio checksum that ringcp checksum gives of the file it serves.
func TestNBDChecksum(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	sparseLayout(t, src)
	uri := nbdtest.Nbdkit(t, nbdtest.Unix, "-r", "file", src).URI
	rep := jsonCopy(t, "--checksum", uri, out)
	sum, ok := rep["checksum"].(map[string]any)
	if !ok {
		t.Fatalf("no checksum in %v", rep)
	}
	r := cli(t, "checksum", src)
	r.want(t, exitOK)
	if !strings.Contains(r.stdout, `"checksum": "`+sum["checksum"].(string)+`"`) {
		t.Errorf("checksum of the copy from %s: %v; ringcp checksum of the file: %s", uri, sum["checksum"], r.stdout)
	}
}

// TestNBDJobs: ringcp --jobs with NBD ends: a file to an export and
// another export to a file in one batch; two jobs writing one export are
// refused (exit 2, nothing written).
func TestNBDJobs(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	dir := t.TempDir()
	src, out, list := filepath.Join(dir, "src"), filepath.Join(dir, "out"), filepath.Join(dir, "jobs")
	data := randomFile(t, src, 3<<20+7, 18)
	dst := memory(t, nbdtest.Unix, 4<<20)
	from := nbdtest.Nbdkit(t, nbdtest.TCP, "-r", "file", src).URI
	if err := os.WriteFile(list, []byte(src+" '"+dst+"'\n'"+from+"' "+out+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, "--jobs", list).want(t, exitOK)
	sameBytes(t, "export written by a batch job", exportBytes(t, dst)[:len(data)], data)
	sameFile(t, "file written by a batch job from an export", out, data)

	twice := memory(t, nbdtest.Unix, 4<<20)
	if err := os.WriteFile(list, []byte(src+" '"+twice+"'\n"+src+" '"+twice+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, "--jobs", list).want(t, exitRefused, "is also job 1's DST")
	sameBytes(t, "export after a refused batch", exportBytes(t, twice), make([]byte, 4<<20))
}
