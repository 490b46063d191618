package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// TestBatchFailingJobStopsAlone: the middle job of three writes to a
// real 32 MiB ext4 more than it holds (Force: past the room check, to
// the ENOSPC of a copy). It fails with ENOSPC and leaves its DST as a
// single failed copy does (a new one discarded, an existing one cut to
// its true prefix); the jobs beside it complete. Both engines.
func TestBatchFailingJobStopsAlone(t *testing.T) {
	blocktest.NeedRoot(t)
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, existing := range []bool{false, true} {
			name := string(eng) + "/new"
			if existing {
				name = string(eng) + "/existing"
			}
			t.Run(name, func(t *testing.T) { failingJob(t, eng, existing) })
		}
	}
}

func failingJob(t *testing.T, eng copier.EngineChoice, existing bool) {
	dev := blocktest.Loop(t, blocktest.SparseFile(t, 32<<20))
	blocktest.Mkfs(t, dev, "ext4", "-O", "^extent,^64bit") // no fallocate: the ENOSPC comes from a write
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jobs := fileJobs(t, dir, 24<<20+5, int64(st.Bfree)*st.Bsize+4<<20, 24<<20+7)
	full := filepath.Join(mnt, "dst")
	jobs[1].opts.Dst = full
	if existing {
		writeFile(t, full, randomBytes(1<<20, 99))
	}
	rep, err := runBatch(t, context.Background(), jobs, copier.BatchOptions{}, func(o *copier.Options) {
		o.Engine, o.Force, o.QueueDepth = eng, true, 4
	})
	var be *copier.BatchError
	if !errors.As(err, &be) || be.Refused || len(be.Jobs) != 1 || be.Jobs[0].Index != 1 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v: want job 2 alone failed with ENOSPC", err)
	}
	for _, i := range []int{0, 2} {
		if j := rep.Jobs[i]; j.Err != nil || j.DstState != copier.DstComplete || !j.Synced {
			t.Errorf("job %d beside the failing one: %v, DST %v", i+1, j.Err, j.DstState)
		}
		compareFile(t, jobs[i].opts.Dst, jobs[i].want)
	}
	failed := rep.Jobs[1]
	if !existing {
		if failed.DstState != copier.DstDiscarded {
			t.Errorf("failed job's new DST: %v, want discarded", failed.DstState)
		}
		if _, err := os.Lstat(full); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the failed job's new DST exists: %v", err)
		}
		return
	}
	got, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	if failed.DstState != copier.DstPrefix || int64(len(got)) != failed.Contiguous || !bytes.Equal(got, jobs[1].want[:len(got)]) {
		t.Errorf("failed job's DST: %v, %d bytes, report says the first %d of SRC", failed.DstState, len(got), failed.Contiguous)
	}
}

// TestBatchRoomTogether: two copies into a real 32 MiB ext4, each of
// which fits alone, do not fit together: both jobs are refused, naming
// each other, and nothing is created; Force lets them try. When one
// SRC's data is mostly written zeros, which stay holes, they fit and
// copy.
func TestBatchRoomTogether(t *testing.T) {
	blocktest.NeedRoot(t)
	dev := blocktest.Loop(t, blocktest.SparseFile(t, 32<<20))
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bfree) * st.Bsize
	dir := t.TempDir()
	jobs := fileJobs(t, dir, free*2/3, free*2/3)
	for i := range jobs {
		jobs[i].opts.Dst = filepath.Join(mnt, fmt.Sprint("dst", i))
	}
	_, err := copier.PrepareAll([]copier.Options{jobs[0].opts, jobs[1].opts}, copier.BatchOptions{})
	refusedJobs(t, err, []string{jobs[0].opts.Dst, jobs[1].opts.Dst}, map[int]string{1: "jobs 1, 2 write there at once", 2: "jobs 1, 2 write there at once"})
	forced := []copier.Options{jobs[0].opts, jobs[1].opts}
	forced[0].Force, forced[1].Force = true, true
	if _, err := copier.PrepareAll(forced, copier.BatchOptions{}); err != nil {
		t.Errorf("with Force: %v", err)
	}

	// Mostly zeros: 1 MiB of data, the rest written zeros.
	zeros := make([]byte, free*2/3)
	copy(zeros, randomBytes(1<<20, 50))
	writeFile(t, jobs[1].opts.Src, zeros)
	jobs[1].want = zeros
	rep, err := runBatch(t, context.Background(), jobs, copier.BatchOptions{}, nil)
	if err != nil {
		t.Fatalf("with zeros: %v", err)
	}
	for i, j := range jobs {
		compareFile(t, j.opts.Dst, j.want)
		if rep.Jobs[i].DstState != copier.DstComplete {
			t.Errorf("job %d: %v", i+1, rep.Jobs[i].DstState)
		}
	}
}
