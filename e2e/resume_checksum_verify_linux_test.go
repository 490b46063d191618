package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
)

// TestResumeChecksumVerify: a resumed copy's checksum covers the part an
// earlier run copied (read again from SRC), and its verification
// compares that part with SRC. A byte changed there without any write
// through the filesystem (DST's marks unchanged, as bit rot or a write to
// the disk beneath would leave them: the rerun trusts the part without
// reading it) is found after the copy (exit 3), the state goes back to
// its block, and the next run copies from there and completes.
func TestResumeChecksumVerify(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "debugfs")
	dev, _ := blocktest.Device(t, 128<<20)
	blocktest.Mkfs(t, dev, "ext4", "-b", "4096") // damageBeneath counts 4 KiB blocks
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	src, dst := filepath.Join(t.TempDir(), "src.img"), filepath.Join(mnt, "dst.img")
	data := randomFile(t, src, resumeSize, 43)
	partial, state := dst+".ringcp-partial", copier.StatePath(dst)
	done := interruptedCopy(t, src, dst)
	bad := done/2 + 3
	damageBeneath(t, dev, mnt, partial, bad)

	r := cli(t, "-v", "--resume", "--verify", "--checksum", src, dst)
	r.want(t, 3, fmt.Sprintf("differs from SRC at offset %d", bad), "is kept for --resume")
	if strings.Contains(r.stderr, "compared with SRC before") {
		t.Errorf("DST's marks are unchanged, yet the rerun compared the part copied before writing:\n%s", r.stderr)
	}
	mustNotExist(t, dst)
	if got, want := readState(t, state), bad/copier.CellSize*copier.CellSize; got != want {
		t.Errorf("state after the mismatch records %d done, want the bad block's start %d", got, want)
	}

	r = cli(t, "--resume", "--verify", "--checksum", "--json", src, dst)
	r.want(t, 0)
	var rep struct {
		Resumed  int64
		Checksum struct{ Checksum string }
		Verify   jsonVerify
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var want struct{ Checksum string }
	json.Unmarshal([]byte(pythonSum(t, src, 0, resumeSize)), &want)
	if rep.Resumed != bad/copier.CellSize*copier.CellSize || rep.Checksum.Checksum != want.Checksum || rep.Verify.Result != "ok" || rep.Verify.Bytes != resumeSize {
		t.Errorf("rerun: resumed %d, checksum %s (want %s), verify %+v", rep.Resumed, rep.Checksum.Checksum, want.Checksum, rep.Verify)
	}
	sameFile(t, "DST after the resumed copy", dst, data)
	mustNotExist(t, partial)
	mustNotExist(t, state)
}

// damageBeneath inverts the byte at off of file on the ext4 filesystem on
// dev, mounted at mnt, by writing dev itself while it is unmounted: the
// file's content changes, its timestamps do not.
func damageBeneath(t *testing.T, dev, mnt, file string, off int64) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if err := syscall.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(blocktest.Run(t, "debugfs", "-R", fmt.Sprintf("bmap <%d> %d", ino, off/4096), dev))
	block, err := strconv.ParseInt(out[len(out)-1], 10, 64) // after the version line
	if err == nil {
		flipByte(t, dev, block*4096+off%4096)
	}
	if err := syscall.Mount(dev, mnt, "ext4", 0, ""); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("debugfs bmap: %q", out)
	}
}
