package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/iocount"
	"github.com/ringcp/ringcp/internal/schematest"
	"github.com/ringcp/ringcp/internal/sshtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// ringcp sync and the restricted copies, as a user runs them.

// syncJSON is what the tests read of --json.
type syncJSON struct {
	Outcome string `json:"outcome"`
	Bytes   int64  `json:"bytes"`
	Zeroed  int64  `json:"bytes_zeroed"`
	Holes   int64  `json:"bytes_holes"`
	Read    int64  `json:"bytes_read"`
	Changed *struct {
		Granules        int64 `json:"granules"`
		GranulesChanged int64 `json:"granules_changed"`
		BytesReadDst    int64 `json:"bytes_read_dst"`
		Ranges          int   `json:"ranges"`
		RangeBytes      int64 `json:"range_bytes"`
	} `json:"changed"`
}

func decodeSync(t *testing.T, r result) syncJSON {
	t.Helper()
	schematest.Output(t).Check(t, []byte(r.stdout))
	var j syncJSON
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Changed == nil {
		t.Fatalf("--json: %v (changed %v)\n%s", err, j.Changed, r.stdout)
	}
	return j
}

// TestSyncCommand: ringcp sync on files, both engines, with --verify and
// --json: DST equals SRC and the JSON counts the differing granules.
func TestSyncCommand(t *testing.T) {
	const g = 64 << 10
	for _, eng := range []string{"uring", "pool"} {
		for _, c := range synctest.Cases(g) {
			if !strings.Contains(c.Name, "/") || strings.HasSuffix(c.Name, "/4097") {
				t.Run(eng+"/"+c.Name, func(t *testing.T) {
					dir := t.TempDir()
					src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
					synctest.WriteFile(t, src, c.Src)
					synctest.WriteDst(t, dst, c)
					r := cli(t, "sync", "--engine", eng, "--granule", "64K", "--verify", "--json", src, dst)
					r.want(t, 0)
					synctest.Same(t, dst, c.Src)
					j := decodeSync(t, r)
					written, zeroed, granules := synctest.Expect(c, g)
					if j.Changed.GranulesChanged != granules || j.Bytes+j.Zeroed+j.Holes != written+zeroed || j.Changed.BytesReadDst != int64(len(c.Src)) {
						t.Fatalf("JSON %+v %+v: want %d granules, %d bytes", j, *j.Changed, granules, written+zeroed)
					}
				})
			}
		}
	}
}

// TestSyncCommandSummary: without --json the summary says what changed.
func TestSyncCommandSummary(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	b := synctest.Random(1, 1<<20+17)
	synctest.WriteFile(t, src, b)
	b[300_000]++
	synctest.WriteFile(t, dst, b)
	cli(t, "sync", src, dst).want(t, 0, "ringcp: synced ", "1 of 257 granules differed") // 4 KiB by default
	cli(t, "sync", "--granule", "64k", src, dst).want(t, 0, "0 of 17 granules differed")
}

// TestSyncCommandLoop: a sync onto a loop device sends it the changed
// granules, no more (its counters), and keeps its bytes past SRC.
func TestSyncCommandLoop(t *testing.T) {
	blocktest.NeedRoot(t)
	const size, g = 8 << 20, 64 << 10
	dev, _ := blocktest.Device(t, size, "--direct-io=on", "--sector-size", "4096")
	old := synctest.Random(2, size)
	if err := os.WriteFile(dev, old, 0); err != nil {
		t.Fatal(err)
	}
	src := append([]byte(nil), old[:5<<20+4097]...)
	src[0]++
	src[len(src)-1]++
	clear(src[2<<20 : 2<<20+3*g])
	path := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, path, src)
	before := iocount.Device(t, dev)
	cli(t, "sync", "--granule", "64K", path, dev).want(t, 0)
	got := iocount.Device(t, dev).Since(before)
	synctest.Same(t, dev, append(append([]byte(nil), src...), old[len(src):]...))
	// The first granule, the last (partial, its tail written buffered
	// through the page cache: a 4 KiB page), three zeroed.
	iocount.Near(t, "bytes written", got.WriteBytes+got.DiscardBytes, g+4097+3*g, 1.0, 8192)
}

// TestSyncCommandRefused: what a sync refuses, before any write, exit 2.
func TestSyncCommandRefused(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	synctest.WriteFile(t, src, synctest.Random(1, 10000))
	old := synctest.Random(2, 8192)
	synctest.WriteFile(t, dst, old)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sync", "--length", "4096", src, dst}, "offsets"},
		{[]string{"sync", "--extents", "/dev/null", src, dst}, "a sync compares all of SRC"},
		{[]string{"--extents", "/dev/null", "--resume", src, dst}, "resuming a restricted copy"},
		{[]string{"sync", "--ssh", "ssh", src, dst}, "--ssh and --remote-ringcp"},
		{[]string{"sync", "--granule", "1M", src, dst}, "--granule"},
		{[]string{"sync", src, "ssh://-oProxyCommand=x/p"}, "ssh option"},
		{[]string{"sync", "ssh://h/a", "ssh://h/b"}, "both ends"},
		{[]string{"sync", "--ioprio", "idle", "ssh://h/a", dst}, "--ioprio"},
		{[]string{"sync", "--resume", "ssh://h/a", dst}, "--resume"},
	} {
		cli(t, c.args...).want(t, 2, c.want)
		synctest.Same(t, dst, old)
	}
}

// TestExtentsCommand: --extents from a file, from stdin, as JSON; a bad
// list is one line and exit 2; --dirty-bitmap needs an NBD SRC.
func TestExtentsCommand(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	s := synctest.Random(1, 1<<20+3)
	synctest.WriteFile(t, src, s)
	old := synctest.Random(2, 1<<20+3)
	synctest.WriteFile(t, dst, old)
	list := filepath.Join(dir, "list")
	synctest.WriteFile(t, list, []byte(`[{"offset": 65536, "length": 8192}, {"offset": 1048576, "length": 3}]`))
	r := cli(t, "--extents", list, "--json", "--direct", "never", src, dst)
	r.want(t, 0)
	want := append([]byte(nil), old...)
	copy(want[65536:65536+8192], s[65536:])
	copy(want[1<<20:], s[1<<20:])
	synctest.Same(t, dst, want)
	if j := decodeSync(t, r); j.Changed.Ranges != 2 || j.Changed.RangeBytes != 8195 {
		t.Fatalf("changed %+v", *j.Changed)
	}
	synctest.WriteFile(t, list, []byte("0 10\n# a comment\n5000 x\n"))
	r = cli(t, "--extents", list, src, dst)
	r.want(t, 2, "line 3")
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("a bad list took %d lines:\n%s", n+1, r.stderr)
	}
	synctest.Same(t, dst, want)
	cli(t, "--dirty-bitmap", "b0", src, dst).want(t, 2, "NBD SRC")
	cli(t, "--dirty-bitmap", "", src, dst).want(t, 2, "--dirty-bitmap")
	// stdin, through the real binary.
	cmd := fmt.Sprintf("printf '0 4096\\n' | %s --extents - --direct never %s %s", binary(t), src, dst)
	if r := runCommand(t, "sh", "-c", cmd); r.code != 0 {
		t.Fatalf("--extents -: exit %d", r.code)
	}
	copy(want[:4096], s)
	synctest.Same(t, dst, want)
}

// TestSyncOverSSH: a sync to and from another host through a real sshd
// of the test's own, the remote half the built binary (ringcp sync
// --serve): both directions, a new DST, a grown and a shrunk SRC, and a
// remote refusal (exit 2, DST untouched).
func TestSyncOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	bin := binary(t)
	sshFlag := "ssh " + strings.Join(srv.Options, " ")
	dir := t.TempDir()
	remote := func(p string) string { return srv.URL(p) }
	// A few cases: a login to sshd takes seconds here (package syncproto
	// runs them all over ssh).
	picked := []string{"random-bytes", "data-became-zeros", "grown", "shrunk", "holes-became-data", "from-empty/4097", "to-empty/4097"}
	for _, c := range synctest.Cases(64 << 10) {
		if slices.Contains(picked, c.Name) {
			for _, dir2 := range []string{"push", "pull"} {
				t.Run(dir2+"/"+c.Name, func(t *testing.T) {
					d := t.TempDir()
					src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
					synctest.WriteFile(t, src, c.Src)
					synctest.WriteDst(t, dst, c)
					a, b := src, remote(dst)
					if dir2 == "pull" {
						a, b = remote(src), dst
					}
					r := ringcp(t, "sync", "--ssh", sshFlag, "--remote-ringcp", bin, "--granule", "64K", "--json", a, b)
					if r.code != 0 {
						t.Fatalf("exit %d:\n%s", r.code, r.stderr)
					}
					synctest.Same(t, dst, c.Src)
					_, _, granules := synctest.Expect(c, 64<<10)
					schematest.Output(t).Check(t, []byte(r.stdout))
					var j struct {
						Changed int64 `json:"granules_changed"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || j.Changed != granules {
						t.Fatalf("JSON %s: want %d granules changed (%v)", r.stdout, granules, err)
					}
				})
			}
		}
	}
	t.Run("new-dst", func(t *testing.T) {
		src := filepath.Join(dir, "new-src")
		b := synctest.Random(9, 3<<20+5)
		synctest.WriteFile(t, src, b)
		dst := filepath.Join(dir, "new-dst")
		ringcp(t, "sync", "--ssh", sshFlag, "--remote-ringcp", bin, src, remote(dst)).want(t, 0, "ringcp: synced ")
		synctest.Same(t, dst, b)
	})
	t.Run("refused-remotely", func(t *testing.T) {
		src := filepath.Join(dir, "r-src")
		synctest.WriteFile(t, src, synctest.Random(3, 4096))
		ringcp(t, "sync", "--ssh", sshFlag, "--remote-ringcp", bin, src, remote(dir)).want(t, 2)
	})
}

// TestSyncInterrupted: SIGINT stops a sync that is writing: it exits
// 130, says DST holds a mix, and a second sync completes it; SIGKILL
// leaves no word, a non-zero exit, and the next sync completes it too.
func TestSyncInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			const size = 64 << 20
			synctest.WriteFile(t, src, synctest.Random(11, size))
			synctest.WriteFile(t, dst, synctest.Random(12, size)) // every granule differs
			p := startMoving(t, []string{binary(t), "sync", "-q", "1", "-b", "128k", "--direct", "always", "--granule", "4k", "--progress", "always", "--max-rate", "4M", src, dst})
			p.signal(t, sig)
			r := p.wait(t)
			switch {
			case r.code == 0:
				t.Fatalf("a stopped sync exited 0:\n%s", r.stderr)
			case sig == syscall.SIGINT && (r.code != 130 || !strings.Contains(r.stderr, "holds a mix of old and new granules")):
				t.Fatalf("exit %d:\n%s", r.code, r.stderr)
			}
			cli(t, "sync", src, dst).want(t, 0)
			b, _ := os.ReadFile(src)
			synctest.Same(t, dst, b)
		})
	}
}
