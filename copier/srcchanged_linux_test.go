package copier_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// srcChangeCopy copies o (its SRC a file of 8 MiB, slowed so that the
// copy takes about a second) and, once 2 MiB are copied, runs during:
// a write behind the copy's read position, or a reader. It fails the
// test when the copy ended first.
func srcChangeCopy(t *testing.T, o copier.Options, during func()) (copier.Report, error) {
	t.Helper()
	done := false
	o.BlockSize, o.QueueDepth, o.MaxRate, o.ProgressInterval = 256<<10, 1, 8<<20, 10*time.Millisecond
	o.OnProgress = func(s copier.Status) {
		if done || s.BytesDone < 2<<20 || s.BytesDone >= s.BytesTotal {
			return
		}
		done = true
		during()
	}
	rep, err := copier.Copy(context.Background(), o)
	if !done {
		t.Fatalf("the copy of %s ended before SRC was written (%v)", o.Src, err)
	}
	return rep, err
}

// writeAt writes b at off of path in place: no truncation, no new inode.
func writeAt(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Error(err)
	}
}

// wantSrcChanged checks the failure of a copy whose SRC file named was
// written while it was read.
func wantSrcChanged(t *testing.T, err error, named string) *copier.SrcChangedError {
	t.Helper()
	var sc *copier.SrcChangedError
	if !errors.As(err, &sc) || sc.Path != named || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("err = %v; want a *SrcChangedError naming %s", err, named)
	}
	return sc
}

// TestSrcChangedDuringCopy: a SRC file written in place behind the
// copy's read position fails the copy on both engines: a new DST is
// discarded, an existing one is said to hold a mix.
func TestSrcChangedDuringCopy(t *testing.T) {
	for _, eng := range engines {
		for _, existing := range []bool{false, true} {
			name := string(eng) + map[bool]string{false: "/new", true: "/existing"}[existing]
			t.Run(name, func(t *testing.T) {
				if eng == copier.EngineUring {
					uringtest.NeedOn(t)
				}
				dir := t.TempDir()
				src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
				writeFile(t, src, randomBytes(8<<20, 51))
				if existing {
					writeFile(t, dst, make([]byte, 8<<20))
				}
				rep, err := srcChangeCopy(t, copier.Options{Src: src, Dst: dst, Engine: eng}, func() {
					writeAt(t, src, randomBytes(4096, 52), 0)
				})
				wantSrcChanged(t, err, src)
				if !existing {
					if _, serr := os.Lstat(dst); !errors.Is(serr, os.ErrNotExist) || rep.DstState != copier.DstDiscarded {
						t.Fatalf("DST %v (%v): want it discarded", rep.DstState, serr)
					}
					return
				}
				if rep.DstState != copier.DstMixed || !strings.Contains(err.Error(), "DST holds a mix") {
					t.Fatalf("DST %v, err %v: want it said to hold a mix", rep.DstState, err)
				}
			})
		}
	}
}

// TestSrcChangedQcow2Backing: an image SRC whose raw backing file is
// written in place while the copy reads it fails the copy, naming the
// backing file.
func TestSrcChangedQcow2Backing(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	base, top := filepath.Join(dir, "base.raw"), filepath.Join(dir, "top.qcow2")
	writeFile(t, base, randomBytes(8<<20, 53))
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", top)
	qemuIO(t, top, "write -P 7 6m 64k")
	dst := filepath.Join(dir, "out.raw")
	_, err := srcChangeCopy(t, copier.Options{Src: top, Dst: dst, SrcFormat: copier.FormatQcow2}, func() {
		writeAt(t, base, randomBytes(4096, 54), 0)
	})
	wantSrcChanged(t, err, base)
	if !strings.Contains(err.Error(), "backing file") {
		t.Errorf("err = %v; want it to say it is SRC's backing file", err)
	}
	wantUnnamed(t, dst)
}

// wantUnnamed fails unless nothing is at dst: a copy that failed never
// gives a new DST its name.
func wantUnnamed(t *testing.T, dst string) {
	t.Helper()
	if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DST was given its name: %v", err)
	}
}

// TestSrcChangedLoopBacking: a loop device SRC whose backing file is
// written (not through the device) while the copy reads it fails the
// copy, naming the backing file.
func TestSrcChangedLoopBacking(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	dir := t.TempDir()
	back := filepath.Join(dir, "back")
	writeFile(t, back, randomBytes(8<<20, 55))
	dev := blocktest.Loop(t, back)
	dst := filepath.Join(dir, "dst")
	_, err := srcChangeCopy(t, copier.Options{Src: dev, Dst: dst}, func() {
		writeAt(t, back, randomBytes(4096, 56), 0)
	})
	wantSrcChanged(t, err, back)
	wantUnnamed(t, dst)
}

// TestSrcChangedLoopDeletedBacking: a loop device SRC whose backing
// file was removed (losetup, then rm: its marks have no path to be read
// from) and that is written through the device while the copy reads it
// fails the copy, naming the device, rather than completing with a mix;
// unwritten, it copies.
func TestSrcChangedLoopDeletedBacking(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	dir := t.TempDir()
	back := filepath.Join(dir, "back")
	writeFile(t, back, randomBytes(8<<20, 57))
	dev := blocktest.Loop(t, back)
	if err := os.Remove(back); err != nil {
		t.Fatal(err)
	}
	// Unwritten, it copies: the flushes of the copy's own fsyncs, and
	// its reads, are no writes.
	if _, err := srcChangeCopy(t, copier.Options{Src: dev, Dst: filepath.Join(dir, "same")}, func() {}); err != nil {
		t.Fatalf("unwritten: %v", err)
	}
	dst := filepath.Join(dir, "dst")
	_, err := srcChangeCopy(t, copier.Options{Src: dev, Dst: dst}, func() {
		writeAt(t, dev, randomBytes(4096, 58), 0)
	})
	wantSrcChanged(t, err, dev)
	wantUnnamed(t, dst)
}

// TestSrcChangedThenStopped: a copy into an existing DST, stopped after
// SRC was written behind its read position, did not keep a prefix of
// SRC (DstPrefix said DST held exactly its first bytes): what it kept
// mixes SRC's old and new content, and DST is said to be mixed.
func TestSrcChangedThenStopped(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(8<<20, 59))
	writeFile(t, dst, make([]byte, 8<<20))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := false
	o := copier.Options{Src: src, Dst: dst, BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 8 << 20, ProgressInterval: 10 * time.Millisecond}
	o.OnProgress = func(s copier.Status) {
		if done || s.BytesDone < 2<<20 || s.BytesDone >= s.BytesTotal {
			return
		}
		done = true
		writeAt(t, src, randomBytes(4096, 60), 0)
		cancel()
	}
	rep, err := copier.Copy(ctx, o)
	if !done || err == nil {
		t.Fatalf("the copy ended (%v) before SRC was written and the copy stopped", err)
	}
	if rep.DstState != copier.DstMixed {
		t.Fatalf("DST %v (%v): want it mixed, SRC having changed in the part kept", rep.DstState, err)
	}
}

// TestSrcChmodedDuringCopy: a chmod of SRC (to its own mode) while the
// copy reads it moves only its ctime, as a write whose mtime was set
// back does: the copy fails, since ringcp cannot tell them apart, and
// the message says what else a ctime alone may mean.
func TestSrcChmodedDuringCopy(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(8<<20, 61))
	_, err := srcChangeCopy(t, copier.Options{Src: src, Dst: dst}, func() {
		if err := os.Chmod(src, 0o644); err != nil {
			t.Error(err)
		}
	})
	wantSrcChanged(t, err, src)
	if !strings.Contains(err.Error(), "its mode, owner or attributes changed") {
		t.Fatalf("err = %v; want it to say that a ctime alone may be no write", err)
	}
}

// TestSrcReadByOthersUnchanged: SRC read by other programs while the
// copy runs (cat, qemu-img info on an image and its backing file) is
// unchanged: the copy completes.
func TestSrcReadByOthersUnchanged(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	base, top := filepath.Join(dir, "base.raw"), filepath.Join(dir, "top.qcow2")
	writeFile(t, base, randomBytes(8<<20, 57))
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", top)
	others := func(file string) func() {
		return func() {
			for _, args := range [][]string{{"cat", file}, {"qemu-img", "info", "-U", "--backing-chain", file}} {
				if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
					t.Errorf("%v: %v: %s", args, err, out)
				}
			}
		}
	}
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			if eng == copier.EngineUring {
				uringtest.NeedOn(t)
			}
			rawDst, imgDst := filepath.Join(t.TempDir(), "raw"), filepath.Join(t.TempDir(), "img")
			if _, err := srcChangeCopy(t, copier.Options{Src: base, Dst: rawDst, Engine: eng}, others(base)); err != nil {
				t.Fatalf("raw: %v", err)
			}
			if eng == copier.EnginePool { // an image is read by the pool only
				if _, err := srcChangeCopy(t, copier.Options{Src: top, Dst: imgDst, SrcFormat: copier.FormatQcow2, Engine: eng}, others(top)); err != nil {
					t.Fatalf("qcow2: %v", err)
				}
			}
		})
	}
}

// TestSrcChangedInBatch: in a batch, the job whose SRC is written while
// it is read fails and its new DST is discarded; the other job, whose
// SRC nothing writes, completes.
func TestSrcChangedInBatch(t *testing.T) {
	dir := t.TempDir()
	jobs := fileJobs(t, dir, 8<<20, 8<<20)
	watched := &engine.Progress{}
	jobs[0].opts.Progress = watched
	stop := make(chan struct{})
	written := make(chan bool, 1)
	go func() {
		for {
			select {
			case <-stop:
				written <- false
				return
			case <-time.After(5 * time.Millisecond):
			}
			if n := watched.Done.Load(); n >= 2<<20 && n < 6<<20 {
				writeAt(t, jobs[0].opts.Src, randomBytes(4096, 58), 0)
				written <- true
				return
			}
		}
	}()
	rep, err := runBatch(t, context.Background(), jobs, copier.BatchOptions{MaxRate: 8 << 20},
		func(o *copier.Options) { o.BlockSize, o.QueueDepth = 256<<10, 1 })
	close(stop)
	if !<-written {
		t.Fatal("the batch ended before SRC was written")
	}
	if err == nil {
		t.Fatal("the batch succeeded")
	}
	wantSrcChanged(t, rep.Jobs[0].Err, jobs[0].opts.Src)
	if rep.Jobs[0].DstState != copier.DstDiscarded {
		t.Errorf("job 1: DST %v, want discarded", rep.Jobs[0].DstState)
	}
	mustNotExist(t, jobs[0].opts.Dst)
	if j := rep.Jobs[1]; j.Err != nil || j.DstState != copier.DstComplete {
		t.Errorf("job 2: %v, DST %v", j.Err, j.DstState)
	}
	compareFile(t, jobs[1].opts.Dst, jobs[1].want)
}

// TestSrcChangedWhileChecksummed: ringcp checksum (Checksum) of a SRC
// written while it is read fails rather than give the digest of a mix.
func TestSrcChangedWhileChecksummed(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(64<<20, 59))
	done := false
	_, err := copier.Checksum(context.Background(), copier.ReadOptions{Src: src, BlockSize: 4096, QueueDepth: 1,
		Direct: copier.DirectAlways, ProgressInterval: 2 * time.Millisecond, OnProgress: func(s copier.Status) {
			if done || s.BytesDone < 4<<20 || s.BytesDone >= s.BytesTotal {
				return
			}
			done = true
			writeAt(t, src, randomBytes(4096, 60), 0)
		}})
	if !done {
		t.Fatalf("the checksum ended before SRC was written (%v)", err)
	}
	wantSrcChanged(t, err, src)
	if !strings.Contains(err.Error(), "the checksum is of neither its old nor its new content") {
		t.Errorf("err = %v; want it to say what the checksum is", err)
	}
}

// TestSrcLoopBackingRemovedDuringCopy: a loop device SRC whose backing
// file is removed (rm) while the copy reads it, and nothing writes it,
// copies: the backing file's marks, read through its path at the end,
// are gone, and its device's counts of sectors written, taken at open
// too, say it was not written. Removed and written through the device,
// it fails.
func TestSrcLoopBackingRemovedDuringCopy(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	for _, written := range []bool{false, true} {
		t.Run(map[bool]string{false: "unwritten", true: "written"}[written], func(t *testing.T) {
			dir := t.TempDir()
			back := filepath.Join(dir, "back")
			writeFile(t, back, randomBytes(8<<20, 62))
			dev := blocktest.Loop(t, back)
			dst := filepath.Join(dir, "dst")
			_, err := srcChangeCopy(t, copier.Options{Src: dev, Dst: dst}, func() {
				if err := os.Remove(back); err != nil {
					t.Error(err)
				}
				if written {
					writeAt(t, dev, randomBytes(4096, 63), 0)
				}
			})
			if !written {
				if err != nil {
					t.Fatalf("nothing wrote SRC: %v", err)
				}
				return
			}
			wantSrcChanged(t, err, dev)
			wantUnnamed(t, dst)
		})
	}
}

// TestSrcLoopBackingRemovedWrittenByHolder: a loop device SRC whose
// backing file is removed while the copy reads it, and then written by a
// program that holds the file open (not through any loop device: no
// sector count moves), fails the copy. Its marks were read at the open;
// the file without a path still has them, and its mtime moved. Before,
// the counts alone held SRC and the copy completed with a mix (exit 0).
func TestSrcLoopBackingRemovedWrittenByHolder(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	dir := t.TempDir()
	back := filepath.Join(dir, "back")
	writeFile(t, back, randomBytes(8<<20, 66))
	dev := blocktest.Loop(t, back)
	holder, err := os.OpenFile(back, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	dst := filepath.Join(dir, "dst")
	_, err = srcChangeCopy(t, copier.Options{Src: dev, Dst: dst}, func() {
		if err := os.Remove(back); err != nil {
			t.Error(err)
		}
		if _, err := holder.WriteAt(randomBytes(4096, 67), 0); err != nil {
			t.Error(err)
		}
		if err := holder.Sync(); err != nil {
			t.Error(err)
		}
	})
	wantSrcChanged(t, err, back)
	wantUnnamed(t, dst)
}

// removedHalves attaches the two halves of a new file of 16 MiB to two
// loop devices (its first 8 MiB, its last), then removes the file: two
// devices over one backing file that has no path.
func removedHalves(t *testing.T, seed uint64) (first, second string) {
	t.Helper()
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	back := filepath.Join(t.TempDir(), "back")
	writeFile(t, back, randomBytes(16<<20, seed))
	first = blocktest.Loop(t, back, "--sizelimit", "8388608")
	second = blocktest.Loop(t, back, "--offset", "8388608", "--sizelimit", "8388608")
	if err := os.Remove(back); err != nil {
		t.Fatal(err)
	}
	return first, second
}

// TestSrcLoopsOverRemovedFile: a copy from one loop device to another
// over the same removed file (its two halves) changes the file's marks
// by its own writes, but not the counts of SRC's device, which hold
// SRC when the file's marks cannot be read. Written through SRC's
// device, the copy fails rather than complete, SRC unchecked; unwritten,
// it copies.
func TestSrcLoopsOverRemovedFile(t *testing.T) {
	for _, written := range []bool{false, true} {
		t.Run(map[bool]string{false: "unwritten", true: "written"}[written], func(t *testing.T) {
			src, dst := removedHalves(t, 64)
			rep, err := srcChangeCopy(t, copier.Options{Src: src, Dst: dst}, func() {
				if written {
					writeAt(t, src, randomBytes(4096, 65), 0)
				}
			})
			if !written {
				if err != nil {
					t.Fatalf("nothing but the copy wrote the file: %v", err)
				}
				for _, n := range rep.Notes {
					if strings.Contains(n, "not checked for writes") {
						t.Fatalf("SRC said unchecked: %s", n)
					}
				}
				return
			}
			wantSrcChanged(t, err, src)
			if rep.DstState != copier.DstMixed {
				t.Fatalf("DST %v: want it said to hold a mix", rep.DstState)
			}
		})
	}
}

// TestSrcLoopNeighbourWritesRemovedFile: a loop device SRC over a
// removed file, whose other half another program writes through a
// second loop device while the copy reads it, fails the copy as a write
// to a backing file that has a path does: the counts of SRC's own device
// do not see it.
func TestSrcLoopNeighbourWritesRemovedFile(t *testing.T) {
	src, other := removedHalves(t, 66)
	dst := filepath.Join(t.TempDir(), "dst")
	_, err := srcChangeCopy(t, copier.Options{Src: src, Dst: dst}, func() {
		// Written back, as the writer's fsync (or writeback) does.
		f, err := os.OpenFile(other, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt(randomBytes(4096, 67), 0); err != nil {
			t.Error(err)
		}
		if err := f.Sync(); err != nil {
			t.Error(err)
		}
	})
	wantSrcChanged(t, err, src)
	if !strings.Contains(err.Error(), other) {
		t.Errorf("err = %v; want it to name %s", err, other)
	}
	wantUnnamed(t, dst)
}

// TestSrcLoopSameDeviceRemovedFile: a copy within one loop device over
// a removed file (its first half to its second) writes through SRC's
// own device: its counts cannot tell another writer's, and the report
// says SRC was not checked rather than fail the copy.
func TestSrcLoopSameDeviceRemovedFile(t *testing.T) {
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	back := filepath.Join(t.TempDir(), "back")
	writeFile(t, back, randomBytes(16<<20, 68))
	dev := blocktest.Loop(t, back)
	if err := os.Remove(back); err != nil {
		t.Fatal(err)
	}
	rep, err := srcChangeCopy(t, copier.Options{Src: dev, Dst: dev, Length: 8 << 20, LengthSet: true, DstOffset: 8 << 20}, func() {})
	if err != nil {
		t.Fatalf("the copy's own writes failed it: %v", err)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "not checked for writes") {
			return
		}
	}
	t.Fatalf("notes %q: want SRC said not checked", rep.Notes)
}

// TestSrcChangedStoppedBeforeAnyWrite: a copy into an existing DST
// stopped after SRC was written, before it wrote a byte, left DST cut
// to nothing of the copy: zero bytes mix nothing, and DST is a prefix,
// not mixed.
func TestSrcChangedStoppedBeforeAnyWrite(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(8<<20, 69))
	writeFile(t, dst, make([]byte, 8<<20))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := false
	o := copier.Options{Src: src, Dst: dst, BlockSize: 1 << 20, QueueDepth: 1, MaxRate: 64 << 10, ProgressInterval: time.Millisecond}
	o.OnProgress = func(s copier.Status) {
		if done || s.BytesDone != 0 {
			return
		}
		done = true
		writeAt(t, src, randomBytes(4096, 70), 0)
		cancel()
	}
	rep, err := copier.Copy(ctx, o)
	if !done || err == nil || rep.Contiguous != 0 {
		t.Fatalf("the copy (%v, %d bytes kept) was not stopped before its first write", err, rep.Contiguous)
	}
	if rep.DstState != copier.DstPrefix {
		t.Fatalf("DST %v (%v): want a prefix of no bytes", rep.DstState, err)
	}
}

// stopLoopCopy copies a loop device SRC (over a file of 8 MiB) into an
// existing DST file and stops it once 2 MiB are copied, after during,
// which is given the device. It returns the report and the device's
// flushes (sysblock.Stat.FlushIOs) from the stop to the copy's return.
func stopLoopCopy(t *testing.T, seed uint64, during func(dev string)) (copier.Report, int64) {
	t.Helper()
	blocktest.NeedRoot(t)
	blocktest.NeedTool(t, "losetup")
	dir := t.TempDir()
	back, dst := filepath.Join(dir, "back"), filepath.Join(dir, "dst")
	writeFile(t, back, randomBytes(8<<20, seed))
	writeFile(t, dst, make([]byte, 8<<20))
	dev := blocktest.Loop(t, back)
	flushes := func() int64 {
		st, err := sysblock.ReadStat(filepath.Join("/sys/class/block", filepath.Base(dev), "stat"))
		if err != nil {
			t.Fatal(err)
		}
		return st.FlushIOs
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var before int64 = -1
	o := copier.Options{Src: dev, Dst: dst, BlockSize: 256 << 10, QueueDepth: 1, MaxRate: 8 << 20, ProgressInterval: 10 * time.Millisecond}
	o.OnProgress = func(s copier.Status) {
		if before >= 0 || s.BytesDone < 2<<20 || s.BytesDone >= s.BytesTotal {
			return
		}
		during(dev)
		before = flushes()
		cancel()
	}
	rep, err := copier.Copy(ctx, o)
	if before < 0 || err == nil {
		t.Fatalf("the copy ended (%v) before it was stopped", err)
	}
	return rep, flushes() - before
}

// TestSrcStopLoopNotFlushed: a copy from a loop device stopped by a
// signal does not fsync SRC to check it: that flushes what others wrote
// through the device (and the backing file's other writers' data) and
// makes the stop wait on it.
func TestSrcStopLoopNotFlushed(t *testing.T) {
	rep, flushed := stopLoopCopy(t, 71, func(string) {})
	if flushed != 0 {
		t.Fatalf("SRC's device had %d flushes after the stop", flushed)
	}
	if rep.DstState != copier.DstPrefix {
		t.Fatalf("DST %v: want a prefix, nothing having written SRC", rep.DstState)
	}
}

// TestSrcStopLoopWrittenUnflushed: a write through a loop device SRC
// that is still in its page cache when the copy is stopped (no fsync:
// its counts and its backing file's marks do not show it yet) is seen
// all the same, and DST is said to hold a mix.
func TestSrcStopLoopWrittenUnflushed(t *testing.T) {
	rep, _ := stopLoopCopy(t, 72, func(dev string) {
		writeAt(t, dev, randomBytes(4096, 73), 0)
	})
	if rep.DstState != copier.DstMixed {
		t.Fatalf("DST %v: want it mixed, SRC written through its device", rep.DstState)
	}
}

// TestSrcLoopBatchNeighbourOverRemovedFile: in a batch, a job reading
// one loop device over a removed file while another job writes a second
// loop device over that file completes, checked: the neighbour's
// writes change the file, not the counts of the reader's device, and
// those hold SRC.
func TestSrcLoopBatchNeighbourOverRemovedFile(t *testing.T) {
	src, other := removedHalves(t, 74)
	dir := t.TempDir()
	jobs := fileJobs(t, dir, 8<<20)
	jobs[0].opts.Dst = other // the neighbour writes the file's second half
	jobs = append(jobs, batchJob{opts: copier.Options{Src: src, Dst: filepath.Join(dir, "dst")}})
	rep, err := runBatch(t, context.Background(), jobs, copier.BatchOptions{}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	j := rep.Jobs[1]
	if j.Err != nil || j.DstState != copier.DstComplete {
		t.Fatalf("the reader: %v, DST %v", j.Err, j.DstState)
	}
	for _, n := range j.Notes {
		if strings.Contains(n, "not checked for writes") {
			t.Fatalf("the reader's SRC said unchecked: %s", n)
		}
	}
}

// TestSrcRenamedDuringCopy: SRC renamed while the copy reads it (its
// bytes untouched) moves its ctime on ext4, xfs, btrfs and tmpfs: the
// copy fails, since a write with its mtime set back does the same, and
// the message names a rename among what a ctime alone may mean.
func TestSrcRenamedDuringCopy(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, src, randomBytes(8<<20, 75))
	_, err := srcChangeCopy(t, copier.Options{Src: src, Dst: dst}, func() {
		if err := os.Rename(src, src+".old"); err != nil {
			t.Error(err)
		}
	})
	wantSrcChanged(t, err, src)
	if !strings.Contains(err.Error(), "renamed") {
		t.Fatalf("err = %v; want it to say that a rename moves ctime too", err)
	}
	wantUnnamed(t, dst)
}
