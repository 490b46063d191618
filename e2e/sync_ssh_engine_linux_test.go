package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"github.com/ringcp/ringcp/internal/schematest"
	"github.com/ringcp/ringcp/internal/sshtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A sync across hosts reads its end on this host through the engine (a
// push's SRC), keeps --max-rate on both hosts, shows its progress in
// every format, and with --verify has DST read back whole on its host.
// The other host is this one, through an sshd of the test's own.

// remoteSyncJSON is what the tests read of a sync across hosts' --json.
type remoteSyncJSON struct {
	Outcome string `json:"outcome"`
	SrcRead int64  `json:"bytes_read_src"`
	DstRead int64  `json:"bytes_read_dst"`
	Written int64  `json:"bytes_written"`
	Changed int64  `json:"granules_changed"`
	Engine  string `json:"engine"`
	Direct  bool   `json:"direct"`
	MaxRate int64  `json:"max_rate"`
}

// runSSHSync runs ringcp sync against srv with args before the operands.
func runSSHSync(t *testing.T, srv *sshtest.Server, args ...string) result {
	t.Helper()
	all := append([]string{"sync", "--ssh", "ssh " + strings.Join(srv.Options, " "), "--remote-ringcp", binary(t)}, args...)
	return ringcp(t, all...)
}

// changedCopy is old with a byte changed in every other granule of g
// (the last one too), and how many granules changed.
func changedCopy(src []byte, g int) ([]byte, int64) {
	old := append([]byte(nil), src...)
	var n int64
	for off := 0; off < len(old); off += 2 * g {
		old[off] ^= 0x5a
		n++
	}
	if last := len(old) - 1; last >= 0 && (last/g)%2 == 1 {
		old[last] ^= 0x5a
		n++
	}
	return old, n
}

// TestSyncSSHEngine: pushes through the engine, both backends, at
// awkward sizes: DST equals SRC, all of SRC was read here (by the named
// backend, with O_DIRECT where the file allows it), only the changed
// granules were written there; a pull with --max-rate keeps the cap.
func TestSyncSSHEngine(t *testing.T) {
	srv := sshtest.Start(t)
	const g = 64 << 10
	for _, eng := range []string{"uring", "pool"} {
		for _, size := range []int64{0, 1, 511, 4097, 3<<20 + 5, 9<<20 + 4097} {
			t.Run(fmt.Sprintf("%s/%d", eng, size), func(t *testing.T) {
				d := t.TempDir()
				src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
				b := synctest.Random(uint64(size)+1, size)
				old, changed := changedCopy(b, g)
				synctest.WriteFile(t, src, b)
				synctest.WriteFile(t, dst, old)
				r := runSSHSync(t, srv, "--engine", eng, "--json", src, srv.URL(dst))
				if r.code != 0 {
					t.Fatalf("exit %d:\n%s", r.code, r.stderr)
				}
				synctest.Same(t, dst, b)
				j := decodeRemote(t, r)
				wantEngine := map[string]string{"uring": "io_uring", "pool": "pool"}[eng]
				if j.SrcRead != size || j.DstRead != size || j.Changed != changed || (size > 0 && j.Engine != wantEngine) {
					t.Fatalf("JSON %+v: want %d read each side, %d granules changed, engine %s", j, size, changed, wantEngine)
				}
				if size >= 1<<20 && !j.Direct {
					t.Errorf("SRC of %d bytes was not read with O_DIRECT: %+v", size, j)
				}
			})
		}
	}
	t.Run("pull/max-rate", func(t *testing.T) {
		d := t.TempDir()
		src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
		b := synctest.Random(5, 2<<20+3)
		old, _ := changedCopy(b, g)
		synctest.WriteFile(t, src, b)
		synctest.WriteFile(t, dst, old)
		r := runSSHSync(t, srv, "--max-rate", "64M", "--json", srv.URL(src), dst)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
		synctest.Same(t, dst, b)
		if j := decodeRemote(t, r); j.MaxRate != 64<<20 || j.Engine != "" {
			t.Fatalf("JSON %+v: want max_rate %d and no engine (a pull's DST)", j, 64<<20)
		}
	})
	t.Run("push/text", func(t *testing.T) {
		d := t.TempDir()
		src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
		b := synctest.Random(6, 1<<20)
		synctest.WriteFile(t, src, b)
		runSSHSync(t, srv, "--max-rate", "256M", "--ioprio", "idle", src, srv.URL(dst)).want(t, 0,
			"ringcp: synced ", "read 1.00 MiB of SRC here (", "of DST on ")
		synctest.Same(t, dst, b)
	})
}

func decodeRemote(t *testing.T, r result) remoteSyncJSON {
	t.Helper()
	schematest.Output(t).Check(t, []byte(r.stdout))
	var j remoteSyncJSON
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Outcome != "complete" {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	return j
}

// TestSyncSSHProgress: a sync across hosts writes every --progress
// format as a copy does, parsed as their readers parse them: json
// objects ending in phase done at 100%, qemu-img's "(100.00/100%)" on
// stdout, nbdcopy's "100/100".
func TestSyncSSHProgress(t *testing.T) {
	srv := sshtest.Start(t)
	d := t.TempDir()
	src := filepath.Join(d, "src")
	b := synctest.Random(8, 5<<20+7)
	synctest.WriteFile(t, src, b)
	for _, dir := range []string{"push", "pull"} {
		for _, format := range []string{"json", "qemu", "percent"} {
			t.Run(dir+"/"+format, func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "dst")
				a, z := src, srv.URL(dst)
				if dir == "pull" {
					a, z = srv.URL(src), dst
				}
				r := runSSHSync(t, srv, "--progress", format, "--progress-interval", "100ms", a, z)
				if r.code != 0 {
					t.Fatalf("exit %d:\n%s", r.code, r.stderr)
				}
				synctest.Same(t, dst, b)
				checkProgress(t, format, r)
			})
		}
	}
}

func checkProgress(t *testing.T, format string, r result) {
	t.Helper()
	switch format {
	case "json":
		var last struct {
			Phase      string  `json:"phase"`
			Done       int64   `json:"bytes_done"`
			Total      int64   `json:"bytes_total"`
			Percent    float64 `json:"percent"`
			BytesWrite int64   `json:"bytes_data"`
		}
		lines := 0
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			if err := json.Unmarshal([]byte(line), &last); err != nil {
				t.Fatalf("progress line %q: %v", line, err)
			}
			lines++
		}
		if lines == 0 || last.Phase != "done" || last.Percent != 100 || last.Done != last.Total || last.Total != 5<<20+7 {
			t.Fatalf("%d lines, last %+v:\n%s", lines, last, r.stderr)
		}
	case "qemu":
		if !strings.Contains(r.stdout, "(100.00/100%)") {
			t.Fatalf("stdout %q", r.stdout)
		}
	case "percent":
		if !strings.Contains(r.stderr, "100/100\n") {
			t.Fatalf("stderr %q", r.stderr)
		}
	}
}

// TestSyncSSHVerify: --verify across hosts reads DST back whole, past
// the page cache: a DST on a FUSE filesystem that stores a byte of a
// written granule inverted, and says the write succeeded, ends the sync
// with exit 3; an honest DST passes.
func TestSyncSSHVerify(t *testing.T) {
	blocktest.NeedRoot(t)
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	srv := sshtest.Start(t)
	const size = 2<<20 + 4097
	back := t.TempDir()
	b := synctest.Random(9, size)
	old, _ := changedCopy(b, 64<<10)
	synctest.WriteFile(t, filepath.Join(back, "src"), b)
	synctest.WriteFile(t, filepath.Join(back, "dst"), old)
	synctest.WriteFile(t, filepath.Join(back, "good"), old)
	fs := faultfs.MountWith(t, back, faultfs.Options{Faults: []faultfs.Fault{{Op: faultfs.OpCorrupt, Offset: 128<<10 + 7, Name: "dst"}}})
	runSSHSync(t, srv, "--verify", filepath.Join(back, "src"), srv.URL(fs.Path("good"))).want(t, 0)
	synctest.Same(t, filepath.Join(back, "good"), b)
	runSSHSync(t, srv, "--verify", filepath.Join(back, "src"), srv.URL(fs.Path("dst"))).want(t, 3)
	if len(fs.Hits()) == 0 {
		t.Error("the corruption never fired")
	}
}

// TestSyncJobsRemoteRefused: a --jobs list with an ssh:// end is refused
// before anything is written, naming the line; a list of local syncs
// runs.
func TestSyncJobsLines(t *testing.T) {
	d := t.TempDir()
	var lines []string
	var want [][]byte
	for i := range 3 {
		src, dst := filepath.Join(d, fmt.Sprint("src", i)), filepath.Join(d, fmt.Sprint("dst", i))
		b := synctest.Random(uint64(20+i), int64(1<<20+i*4097))
		old, _ := changedCopy(b, 64<<10)
		synctest.WriteFile(t, src, b)
		synctest.WriteFile(t, dst, old)
		lines, want = append(lines, src+" "+dst), append(want, b)
	}
	list := filepath.Join(d, "list")
	synctest.WriteFile(t, list, []byte(strings.Join(lines, "\n")+"\nsrc0 ssh://host/dst\n"))
	cli(t, "sync", "--jobs", list).want(t, 2, "line 4", "ssh://host/dst", "on its own")
	old0, _ := changedCopy(want[0], 64<<10)
	synctest.Same(t, filepath.Join(d, "dst0"), old0)
	synctest.WriteFile(t, list, []byte(strings.Join(lines, "\n")+"\n"))
	cli(t, "sync", "--jobs", list).want(t, 0)
	for i, b := range want {
		synctest.Same(t, filepath.Join(d, fmt.Sprint("dst", i)), b)
	}
}

// TestExtentsVerifyCommand: --verify with --extents compares the ranges
// copied, and says so in --json.
func TestExtentsVerifyCommand(t *testing.T) {
	d := t.TempDir()
	src, dst, list := filepath.Join(d, "src"), filepath.Join(d, "dst"), filepath.Join(d, "list")
	b := synctest.Random(30, 1<<20+511)
	synctest.WriteFile(t, src, b)
	synctest.WriteFile(t, dst, synctest.Random(31, 1<<20+511))
	synctest.WriteFile(t, list, []byte("4096 8192\n1048576 511\n"))
	r := cli(t, "--extents", list, "--verify", "--json", src, dst)
	r.want(t, 0)
	schematest.Output(t).Check(t, []byte(r.stdout))
	var j struct {
		Verify *struct {
			Bytes     int64 `json:"bytes"`
			BadBlocks int64 `json:"bad_blocks"`
		} `json:"verify"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Verify == nil || j.Verify.Bytes < 8192+511 || j.Verify.BadBlocks != 0 {
		t.Fatalf("--json %s (%v)", r.stdout, err)
	}
}
