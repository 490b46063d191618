package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"github.com/ringcp/ringcp/internal/schematest"
)

// The command with qcow2 ends read and written by ringcp itself: info
// against qemu-img info and measure, a kill -9 in the middle of writing an
// image, the checksum of an image against the checksum of its guest's
// bytes as qemu-nbd serves them.

// qemuOut runs a QEMU tool that must succeed and returns its stdout.
func qemuOut(t *testing.T, tool string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", tool, strings.Join(args, " "), err)
	}
	return out
}

// infoChain is a chain of three: a raw base shorter than its overlays, a
// zstd-compressed qcow2 over it, a qcow2 with 4 KiB clusters over that.
func infoChain(t *testing.T, dir string) string {
	base := filepath.Join(dir, "base.raw")
	randomFile(t, base, 1<<20, 1)
	mid := filepath.Join(dir, "mid.qcow2")
	qemuOut(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", "compression_type=zstd", "-b", base, "-F", "raw", mid, "3m")
	qemuOut(t, "qemu-io", "-f", "qcow2", "-c", "write -c -P 5 0 64k", "-c", "write -P 6 1m 64k", mid)
	top := filepath.Join(dir, "top.qcow2")
	qemuOut(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", "cluster_size=4096", "-b", "mid.qcow2", "-F", "qcow2", top, "4m")
	qemuOut(t, "qemu-io", "-f", "qcow2", "-c", "write -P 7 2m 12k", "-c", "write -z 0 4k", top)
	return top
}

// infoImage is what info --json says of a file of a chain.
type infoImage struct {
	Filename        string `json:"filename"`
	Format          string `json:"format"`
	VirtualSize     int64  `json:"virtual_size"`
	ActualSize      int64  `json:"actual_size"`
	ClusterSize     int64  `json:"cluster_size"`
	Compat          string `json:"compat"`
	CompressionType string `json:"compression_type"`
	Dirty           bool   `json:"dirty"`
	BackingFilename string `json:"backing_filename"`
	BackingFormat   string `json:"backing_format"`
	InUse           *bool  `json:"in_use"`
	Measure         *struct {
		Required       int64 `json:"required"`
		FullyAllocated int64 `json:"fully_allocated"`
	} `json:"measure"`
	Backing *infoImage `json:"backing_image"`
}

// TestInfo: ringcp info --json says of each file of a chain what qemu-img
// info --backing-chain says, and of the top what qemu-img measure says;
// a file qemu-nbd serves is in use.
func TestInfo(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io", "qemu-nbd")
	dir := t.TempDir()
	top := infoChain(t, dir)
	var theirs []struct {
		Filename      string `json:"filename"`
		Format        string `json:"format"`
		VirtualSize   int64  `json:"virtual-size"`
		ActualSize    int64  `json:"actual-size"`
		ClusterSize   int64  `json:"cluster-size"`
		Backing       string `json:"backing-filename"`
		BackingFormat string `json:"backing-filename-format"`
		Dirty         bool   `json:"dirty-flag"`
		Specific      struct {
			Data struct {
				Compat      string `json:"compat"`
				Compression string `json:"compression-type"`
			} `json:"data"`
		} `json:"format-specific"`
	}
	if err := json.Unmarshal(qemuOut(t, "qemu-img", "info", "--output", "json", "--backing-chain", top), &theirs); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "info", "--json", top)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := schematest.Output(t).Validate([]byte(r.stdout)); err != nil {
		t.Errorf("info --json breaks the contract: %v\n%s", err, r.stdout)
	}
	var out struct{ Image *infoImage }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Image == nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	ours := out.Image
	in := ours
	for i, q := range theirs {
		if in == nil {
			t.Fatalf("ringcp's chain ends at %d files, qemu-img's has %d", i, len(theirs))
		}
		got := []any{filepath.Base(in.Filename), in.Format, in.VirtualSize, in.ActualSize, in.ClusterSize, in.BackingFilename, in.BackingFormat, in.Dirty, in.Compat, in.CompressionType}
		want := []any{filepath.Base(q.Filename), q.Format, q.VirtualSize, q.ActualSize, q.ClusterSize, q.Backing, q.BackingFormat, q.Dirty, q.Specific.Data.Compat, q.Specific.Data.Compression}
		for k := range got {
			if got[k] != want[k] {
				t.Errorf("file %d: ringcp says %v, qemu-img %v (all: %v against %v)", i, got[k], want[k], got, want)
				break
			}
		}
		if in.InUse == nil || *in.InUse {
			t.Errorf("file %d: in use %v, want false", i, in.InUse)
		}
		in = in.Backing
	}
	var measure struct {
		Required       int64 `json:"required"`
		FullyAllocated int64 `json:"fully-allocated"`
	}
	json.Unmarshal(qemuOut(t, "qemu-img", "measure", "--output", "json", "-O", "qcow2", top), &measure)
	if ours.Measure == nil || ours.Measure.Required != measure.Required || ours.Measure.FullyAllocated != measure.FullyAllocated {
		t.Errorf("measure: ringcp %+v, qemu-img %+v", ours.Measure, measure)
	}

	qemutest.NBD(t, top, "-f", "qcow2")
	r = cli(t, "info", top)
	if !strings.Contains(r.stdout, "in use: yes") {
		t.Errorf("a qcow2 qemu-nbd serves is not in use:\n%s", r.stdout)
	}
	if r := cli(t, "info", filepath.Join(dir, "nothing")); r.code != exitRefused {
		t.Errorf("a missing image: exit %d", r.code)
	}
}

// TestQcow2KillLeavesNoImage: ringcp killed with SIGKILL while it writes
// a new image leaves nothing under DST's name (and nothing a next copy
// trips over).
func TestQcow2KillLeavesNoImage(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 32<<20, 2)
	dst := filepath.Join(dir, "dst.qcow2")
	cmd := exec.Command(binary(t), "--dst-format", "qcow2", "--compress", "zstd", "--max-rate", "4M", src, dst)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("after kill -9, DST's name holds something: %v", err)
	}
	if r := cli(t, "--dst-format", "qcow2", src, dst); r.code != exitOK {
		t.Fatalf("the copy after the kill: exit %d", r.code)
	}
	if out, err := exec.Command("qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img compare: %v\n%s", err, out)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 2 {
		t.Errorf("the folder holds %d entries, want SRC and DST", len(left))
	}
}

// TestQcow2Checksum: the checksum of an image is that of its guest's
// bytes: ringcp checksum of the qcow2 file equals ringcp checksum of the
// export qemu-nbd makes of it (imageio's checksum through qemu-nbd), and
// a copy's --checksum says the same.
func TestQcow2Checksum(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	dir := t.TempDir()
	top := infoChain(t, dir)
	r := cli(t, "checksum", top)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	srv := nbdtest.QemuNBD(t, nbdtest.Unix, "qcow2", top, "-r")
	viaNBD := cli(t, "checksum", srv.URI)
	if r.stdout != viaNBD.stdout {
		t.Errorf("ringcp checksum: %s through qemu-nbd: %s", r.stdout, viaNBD.stdout)
	}
	out := cli(t, "--json", "--checksum", "--verify", top, filepath.Join(dir, "out.raw"))
	if out.code != exitOK {
		t.Fatalf("copy: exit %d: %s", out.code, out.stderr)
	}
	var rep struct {
		Checksum struct {
			Checksum string `json:"checksum"`
		} `json:"checksum"`
	}
	json.Unmarshal([]byte(out.stdout), &rep)
	if rep.Checksum.Checksum == "" || !strings.Contains(r.stdout, rep.Checksum.Checksum) {
		t.Errorf("--checksum %q, ringcp checksum %s", rep.Checksum.Checksum, r.stdout)
	}
}

// TestQcow2Jobs: a --jobs list with a qcow2 SRC and a raw one, then
// both into new compressed images: each is what qemu-img compare finds
// equal.
func TestQcow2Jobs(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	top := infoChain(t, dir)
	raw := filepath.Join(dir, "plain.raw")
	randomFile(t, raw, 1<<20+4097, 3)
	list := writeList(t, dir, top+" "+filepath.Join(dir, "a.raw"), raw+" "+filepath.Join(dir, "a2.raw"))
	cli(t, "--jobs", list).want(t, exitOK, "2 complete")
	list = writeList(t, dir, top+" "+filepath.Join(dir, "c.qcow2"), raw+" "+filepath.Join(dir, "b.qcow2"))
	cli(t, "--jobs", list, "--dst-format", "qcow2", "--compress", "zlib", "--verify").want(t, exitOK, "2 complete")
	for _, c := range [][]string{
		{"-f", "qcow2", "-F", "raw", top, filepath.Join(dir, "a.raw")},
		{"-f", "raw", "-F", "qcow2", raw, filepath.Join(dir, "b.qcow2")},
		{"-f", "qcow2", "-F", "qcow2", top, filepath.Join(dir, "c.qcow2")},
	} {
		if out, err := exec.Command("qemu-img", append([]string{"compare", "-q"}, c...)...).CombinedOutput(); err != nil {
			t.Errorf("qemu-img compare %v: %v\n%s", c, err, out)
		}
	}
}

// TestQcow2Resume: a copy of a qcow2 SRC stopped by SIGINT goes on with
// --resume from where its state says, and ends with the guest's bytes.
func TestQcow2Resume(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	raw := filepath.Join(dir, "src.raw")
	randomFile(t, raw, 64<<20, 4)
	img := filepath.Join(dir, "src.qcow2")
	qemuOut(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", "-o", "cluster_size=2M", raw, img)
	dst := filepath.Join(dir, "dst.raw")
	if done := interruptedCopy(t, img, dst, "--engine", "pool"); done >= 64<<20 {
		t.Fatalf("the copy was not interrupted: %d bytes recorded", done)
	}
	cli(t, "--resume", img, dst).want(t, exitOK)
	if digest(t, dst) != digest(t, raw) {
		t.Fatal("the resumed copy is not the guest's bytes")
	}
}

// TestQcow2OverNBD: an image file served as raw bytes over NBD (as an
// object store or a remote host would serve it) is read as its guest
// sees it; an image there that names a backing file is refused, since a
// remote image must not make ringcp read this host's files.
func TestQcow2OverNBD(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	dir := t.TempDir()
	raw := filepath.Join(dir, "src.raw")
	randomFile(t, raw, 2<<20+512, 5)
	img := filepath.Join(dir, "img.qcow2")
	qemuOut(t, "qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", "-o", "compression_type=zstd", raw, img)
	srv := nbdtest.QemuNBD(t, nbdtest.Unix, "raw", img, "-r")
	out := filepath.Join(dir, "out.raw")
	cli(t, "--verify", srv.URI, out).want(t, exitOK)
	if digest(t, out) != digest(t, raw) {
		t.Error("the image read over NBD is not the guest's bytes")
	}
	top := infoChain(t, t.TempDir())
	chained := nbdtest.QemuNBD(t, nbdtest.Unix, "raw", top, "-r")
	cli(t, chained.URI, filepath.Join(dir, "chained.raw")).want(t, exitRefused, `backing file "mid.qcow2" not followed`)
	mustNotExist(t, filepath.Join(dir, "chained.raw"))
}
