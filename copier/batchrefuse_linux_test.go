package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// Refusals across the jobs of a batch: each names the refused jobs, and
// nothing is written: existing files keep their bytes and mtime, new
// ones never appear.

// kept is a file's bytes and mtime, to prove a refusal wrote nothing.
type kept struct {
	path  string
	data  []byte
	mtime time.Time
}

// keep writes n random bytes to path with an mtime an hour ago.
func keep(t *testing.T, path string, n int64, seed uint64) kept {
	t.Helper()
	data := randomBytes(n, seed)
	writeFile(t, path, data)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return kept{path, data, old}
}

func (k kept) check(t *testing.T) {
	t.Helper()
	got, err := os.ReadFile(k.path)
	fi, err2 := os.Stat(k.path)
	if err != nil || err2 != nil || !bytes.Equal(got, k.data) || !fi.ModTime().Equal(k.mtime) {
		t.Errorf("%s changed although the batch was refused (%v %v)", k.path, err, err2)
	}
}

// refusedJobs checks err is a refused BatchError naming exactly the jobs
// (1-based) in want, each error holding its text, and that none of the
// new DSTs exists.
func refusedJobs(t *testing.T, err error, newDsts []string, want map[int]string) {
	t.Helper()
	var be *copier.BatchError
	if !errors.As(err, &be) || !be.Refused {
		t.Fatalf("err = %v: want a refused BatchError", err)
	}
	var r *copier.RefusedError
	if !errors.As(err, &r) {
		t.Errorf("errors.As finds no *RefusedError in %v", err)
	}
	if len(be.Jobs) != len(want) {
		t.Errorf("%d jobs refused, want %d: %v", len(be.Jobs), len(want), err)
	}
	for _, j := range be.Jobs {
		text, ok := want[j.Index+1]
		if !ok || !strings.Contains(j.Error(), text) {
			t.Errorf("refused %q; want job %d refused with %q", j.Error(), j.Index+1, text)
		}
	}
	for _, d := range newDsts {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a refused batch", d)
		}
	}
}

func prepareOpts(pairs ...[2]string) []copier.Options {
	opts := make([]copier.Options, len(pairs))
	for i, p := range pairs {
		opts[i] = copier.Options{Src: p[0], Dst: p[1]}
	}
	return opts
}

// TestBatchRefusesSameDst: one DST named twice, by the same path, through
// a symlinked folder, or (existing) by a hard link, refuses the later job.
func TestBatchRefusesSameDst(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	writeFile(t, a, randomBytes(100_000, 1))
	writeFile(t, b, randomBytes(100_000, 2))
	writeFile(t, c, randomBytes(100_000, 3))
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "new")
	_, err := copier.PrepareAll(prepareOpts([2]string{a, dst}, [2]string{b, dst}, [2]string{c, filepath.Join(dir, "other")}), copier.BatchOptions{})
	refusedJobs(t, err, []string{dst}, map[int]string{2: "is also job 1's DST"})

	_, err = copier.PrepareAll(prepareOpts([2]string{a, dst}, [2]string{b, filepath.Join(dir, "link", "new")}), copier.BatchOptions{})
	refusedJobs(t, err, []string{dst}, map[int]string{2: "is also job 1's DST (" + dst + ")"})

	old := keep(t, filepath.Join(dir, "old"), 1<<20, 4)
	alias := filepath.Join(dir, "alias")
	if err := os.Link(old.path, alias); err != nil {
		t.Fatal(err)
	}
	_, err = copier.PrepareAll(prepareOpts([2]string{a, old.path}, [2]string{b, alias}), copier.BatchOptions{})
	refusedJobs(t, err, nil, map[int]string{2: alias + ": is also job 1's DST"})
	old.check(t)
}

// TestBatchRefusesDstThatIsSrc: a job writing another job's SRC is
// refused, whichever comes first; two jobs reading one SRC are fine.
func TestBatchRefusesDstThatIsSrc(t *testing.T) {
	dir := t.TempDir()
	a := keep(t, filepath.Join(dir, "a"), 1<<20, 5)
	c := keep(t, filepath.Join(dir, "c"), 1<<20, 6)
	b := filepath.Join(dir, "b")
	_, err := copier.PrepareAll(prepareOpts([2]string{a.path, b}, [2]string{c.path, a.path}), copier.BatchOptions{})
	refusedJobs(t, err, []string{b}, map[int]string{2: a.path + ": is job 1's SRC"})
	_, err = copier.PrepareAll(prepareOpts([2]string{c.path, a.path}, [2]string{a.path, b}), copier.BatchOptions{})
	refusedJobs(t, err, []string{b}, map[int]string{1: a.path + ": is job 2's SRC"})
	a.check(t)
	c.check(t)

	// Every refused job is named, and a job Prepare refuses alone too.
	missing := filepath.Join(dir, "missing")
	_, err = copier.PrepareAll(prepareOpts([2]string{c.path, a.path}, [2]string{missing, b}, [2]string{a.path, filepath.Join(dir, "d")}, [2]string{b, c.path}), copier.BatchOptions{})
	refusedJobs(t, err, []string{b, filepath.Join(dir, "d")}, map[int]string{1: "is job 3's SRC", 2: missing + ": no such file", 4: "no such file"})

	bt, err := copier.PrepareAll(prepareOpts([2]string{a.path, b}, [2]string{a.path, filepath.Join(dir, "d")}), copier.BatchOptions{})
	if err != nil {
		t.Fatalf("one SRC read by two jobs: %v", err)
	}
	if _, err := bt.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	compareFile(t, b, a.data)
	compareFile(t, filepath.Join(dir, "d"), a.data)
}

// TestBatchRefusesOverlapThroughLoop: a loop device shows bytes 2-3 MiB
// of a file. A job writing the loop device while another reads the file
// is refused; reading only the file's first MiB is not.
func TestBatchRefusesOverlapThroughLoop(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	file := keep(t, filepath.Join(dir, "file"), 4<<20, 7)
	dev := blocktest.Loop(t, file.path, "--offset", "2097152", "--sizelimit", "1048576")
	img := filepath.Join(dir, "img")
	writeFile(t, img, randomBytes(1<<20, 8))
	out := filepath.Join(dir, "out")
	_, err := copier.PrepareAll(prepareOpts([2]string{file.path, out}, [2]string{img, dev}), copier.BatchOptions{})
	refusedJobs(t, err, []string{out}, map[int]string{2: dev + ": overlaps job 1's SRC on " + file.path})
	file.check(t)

	opts := prepareOpts([2]string{file.path, out}, [2]string{img, dev})
	opts[0].Length, opts[0].LengthSet = 1<<20, true
	b, err := copier.PrepareAll(opts, copier.BatchOptions{})
	if err != nil {
		t.Fatalf("disjoint ranges: %v", err)
	}
	if _, err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	compareFile(t, out, file.data[:1<<20])
	got, _ := os.ReadFile(file.path)
	if want, _ := os.ReadFile(img); !bytes.Equal(got[2<<20:3<<20], want) {
		t.Error("the image did not land at 2-3 MiB of the file through the loop device")
	}
}

// TestBatchRefusesOverlapThroughPartition: a disk and its partition (1-9
// MiB): a job writing the partition while another reads the disk, or
// writing the disk while another writes the partition, is refused. Two
// partitions side by side are two DSTs.
func TestBatchRefusesOverlapThroughPartition(t *testing.T) {
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	back := keep(t, filepath.Join(dir, "disk"), 16<<20, 9)
	disk := blocktest.Loop(t, back.path, "--partscan")
	p1 := blocktest.Partition(t, disk, 1, 1<<20, 8<<20)
	p2 := blocktest.Partition(t, disk, 2, 10<<20, 4<<20)
	img := filepath.Join(dir, "img")
	data := randomBytes(2<<20, 10)
	writeFile(t, img, data)
	out := filepath.Join(dir, "out")

	_, err := copier.PrepareAll(prepareOpts([2]string{disk, out}, [2]string{img, p1}), copier.BatchOptions{})
	refusedJobs(t, err, []string{out}, map[int]string{2: p1 + ": overlaps job 1's SRC on " + disk})
	_, err = copier.PrepareAll(prepareOpts([2]string{img, p1}, [2]string{img, disk}), copier.BatchOptions{})
	refusedJobs(t, err, nil, map[int]string{2: disk + ": overlaps job 1's DST on " + disk})
	back.check(t)

	b, err := copier.PrepareAll(prepareOpts([2]string{img, p1}, [2]string{img, p2}), copier.BatchOptions{})
	if err != nil {
		t.Fatalf("two partitions: %v", err)
	}
	if _, err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	compareDevicePrefix(t, p1, data)
	compareDevicePrefix(t, p2, data)
}

// TestBatchAcquiresAllFirst: job 2's DST is locked by someone else after
// PrepareAll. Run refuses the whole batch before any job writes: job 1's
// existing DST keeps its bytes and mtime, job 3's new DST never appears,
// and no temporary file is left.
func TestBatchAcquiresAllFirst(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(3<<20+5, 11))
	first := keep(t, filepath.Join(dir, "first"), 1<<20, 12)
	locked := keep(t, filepath.Join(dir, "locked"), 1<<20, 13)
	third := filepath.Join(dir, "third")
	for _, eng := range engines {
		opts := prepareOpts([2]string{src, first.path}, [2]string{src, locked.path}, [2]string{src, third})
		for i := range opts {
			opts[i].Engine = eng
		}
		b, err := copier.PrepareAll(opts, copier.BatchOptions{Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(locked.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		rep, err := b.Run(context.Background())
		f.Close()
		refusedJobs(t, err, []string{third}, map[int]string{2: "flock"})
		for i, j := range rep.Jobs {
			if j.Started || j.DstState != copier.DstUntouched {
				t.Errorf("%s: job %d started %v, DST %v", eng, i+1, j.Started, j.DstState)
			}
		}
		first.check(t)
		locked.check(t)
		if names, _ := filepath.Glob(filepath.Join(dir, ".*")); len(names) != 0 {
			t.Errorf("left behind: %v", names)
		}
	}
}

// TestBatchAcquireRefusalLeavesNothing: as TestBatchAcquiresAllFirst,
// with --resume: the jobs that acquired before job 2's refusal had made
// their state files and a new DST's partial file; the batch says nothing
// was written, so none of them may be left (issue 20: they were).
func TestBatchAcquireRefusalLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(3<<20+5, 14))
	locked := keep(t, filepath.Join(dir, "locked"), 1<<20, 15)
	existing := keep(t, filepath.Join(dir, "existing"), 1<<20, 16)
	fresh := filepath.Join(dir, "fresh")
	opts := prepareOpts([2]string{src, fresh}, [2]string{src, locked.path}, [2]string{src, existing.path})
	for i := range opts {
		opts[i].Resume = true
	}
	b, err := copier.PrepareAll(opts, copier.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(locked.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = b.Run(context.Background())
	refusedJobs(t, err, []string{fresh}, map[int]string{2: "flock"})
	locked.check(t)
	existing.check(t)
	for _, pattern := range []string{"*.ringcp-*", ".*"} {
		if names, _ := filepath.Glob(filepath.Join(dir, pattern)); len(names) != 0 {
			t.Errorf("a refused batch left behind %v", names)
		}
	}
}

// TestBatchRefusesSameNewDstThroughBindMount: two new DSTs that are one
// file because one folder is bind-mounted on another are refused by
// PrepareAll, before anything is written (issue 20: one job failed late,
// "appeared while copying").
func TestBatchRefusesSameNewDstThroughBindMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount a folder")
	}
	dir := t.TempDir()
	real, bind := filepath.Join(dir, "real"), filepath.Join(dir, "bind")
	for _, d := range []string{real, bind} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(real, bind, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(bind, unix.MNT_DETACH) })
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, a, randomBytes(100_000, 17))
	writeFile(t, b, randomBytes(100_000, 18))
	dst := filepath.Join(real, "new")
	_, err := copier.PrepareAll(prepareOpts([2]string{a, dst}, [2]string{b, filepath.Join(bind, "new")}), copier.BatchOptions{})
	refusedJobs(t, err, []string{dst}, map[int]string{2: "is also job 1's DST (" + dst + ")"})
	// Spelled every other way too.
	rel, err := filepath.Rel(mustGetwd(t), filepath.Join(bind, "..", "real", ".", "new"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = copier.PrepareAll(prepareOpts([2]string{a, dst}, [2]string{b, rel}), copier.BatchOptions{})
	refusedJobs(t, err, []string{dst}, map[int]string{2: "is also job 1's DST"})
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
