package enginetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// ReservationGivenBack: a copy into a new file reserves DST ahead of its
// writes, and once it finds a zero run in the data it read (not a hole of
// SRC) it gives back, in one call, what it reserved beyond the chunks
// planned, and reserves no more: the zero runs after it are holes that
// cost nothing, where each reserved one had to be punched. A copy of data
// without zero runs keeps its reservation, and so does one whose DST
// cannot give blocks back (vfat can reserve, not punch): it punches its
// zero runs one by one, as before, and so does one that finds no room to
// give them back (a punch that splits an extent may need a block of its
// own, on a nearly full file system): giving back saves time, and is no
// reason to fail a copy. Either way DST reads as SRC and takes no more
// blocks.
func ReservationGivenBack(t *testing.T, tg Target) {
	var zeroRuns, plain []Piece
	for range 32 {
		zeroRuns = append(zeroRuns, DataPiece(240<<10), ZerosPiece(16<<10))
		plain = append(plain, DataPiece(256<<10))
	}
	for _, c := range []struct {
		name   string
		pieces []Piece
		back   bool
		refuse syscall.Errno
	}{{"zero-runs", zeroRuns, true, 0}, {"data-only", plain, false, 0}, {"cannot-give-back", zeroRuns, true, syscall.EOPNOTSUPP},
		{"no-room-to-give-back", zeroRuns, true, syscall.ENOSPC}} {
		t.Run(c.name, func(t *testing.T) {
			log := reserveCopy(t, tg, c.pieces, &reserveLog{refuse: c.refuse})
			if len(log.reserved) != 1 {
				t.Fatalf("reserved %v, want one reservation of the whole range", log.reserved)
			}
			length := log.reserved[0][1]
			switch {
			case !c.back && len(log.given) > 0:
				t.Fatalf("gave back %v of a copy without zero runs", log.given)
			case c.back && len(log.given) != 1:
				t.Fatalf("gave back %v, want one range after the first zero run", log.given)
			case c.back && (log.given[0][0] < 256<<10 || log.given[0][0]+log.given[0][1] != length):
				t.Fatalf("gave back %v of a reservation of %d: want from a chunk after the first zero run to the end", log.given, length)
			}
		})
	}
}

// ReservationCutShort: a reservation that fails for room (ENOSPC) may
// keep the blocks it got before it failed (ext4 does not roll a failed
// fallocate back; XFS, btrfs and tmpfs do). Those blocks are this copy's reservation all the
// same: the zero runs found in them must not stay allocated, or a sparse
// copy that fits runs out of room (a 300 MiB SRC of 200 MiB data failed
// with ENOSPC on an ext4 with 205 MiB free, where ringcp without the
// planner's stopReserving copied it). DST takes no more blocks than SRC's
// data.
func ReservationCutShort(t *testing.T, tg Target) {
	var ps []Piece
	var data int64
	for range 32 {
		ps = append(ps, DataPiece(192<<10), ZerosPiece(64<<10))
		data += 192 << 10
	}
	dst := filepath.Join(t.TempDir(), "dst")
	log := reserveCopy(t, tg, ps, &reserveLog{noRoom: true, keep: &dst})
	if got := blocks(t, dst) * 512; got > data+64<<10 {
		t.Fatalf("DST takes %d bytes, SRC's data %d: reserved zero runs kept (reserved %v, gave back %v)", got, data, log.reserved, log.given)
	}
	// A DST that holds other data has its zero runs zeroed one by one
	// anyway; what lies ahead of the writes is its own until they come
	// (a copy stopped there leaves it as it was), and is not punched.
	if log := reserveCopy(t, tg, ps, &reserveLog{noRoom: true, old: true}); len(log.given) > 0 {
		t.Fatalf("gave back %v of a DST that holds other data", log.given)
	}
}

// reserveCopy copies the layout into a new file, O_DIRECT with
// preallocation, and returns the reservations the engine made; with
// log.refuse, DST says it cannot give blocks back; with log.keep, DST is
// left at that path.
func reserveCopy(t *testing.T, tg Target, ps []Piece, log *reserveLog) *reserveLog {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if log.keep != nil {
		dstPath = *log.keep
	}
	want := MakeSparse(t, srcPath, ps, 7)
	if log.old {
		if err := os.WriteFile(dstPath, RandomBytes(int64(len(want)), 8), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job, closeJob := NewJob(t, srcPath, dstPath, true, 64<<10, 4)
	var once sync.Once
	cleanup := func() { once.Do(closeJob) }
	defer cleanup()
	job.Length = int64(len(want))
	job.FinalSize, job.CutBackOnStop, job.Preallocate = job.Length, true, true
	job.MapHoles, job.ZeroBlock, job.DstZeroed = true, 4096, !log.old
	job.CutBackOnStop = !log.old
	tg.serve(t, &job)
	if job.Ends[engine.FileDst] != nil {
		t.Skip("DST is served by another end: it reserves nothing")
	}
	log.FileEnd = engine.FileEnd{F: job.Files[engine.FileDst]}
	job.Ends[engine.FileDst] = log
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	cleanup()
	CompareFile(t, dstPath, want)
	if blocks(t, dstPath) > blocks(t, srcPath) {
		t.Fatalf("DST takes %d blocks, SRC %d", blocks(t, dstPath), blocks(t, srcPath))
	}
	return log
}

// reserveLog is a file DST that logs the ranges reserved and given back.
type reserveLog struct {
	engine.FileEnd
	reserved, given [][2]int64
	refuse          syscall.Errno // Unreserve fails with it
	// noRoom: Reserve reserves the first half of what it is asked for,
	// then fails with ENOSPC, as ext4 does on a file system too small
	// for the whole.
	noRoom bool
	keep   *string // DST's path, outside the copy's temporary folder
	old    bool    // DST holds other data: it does not read as zeros
}

func (l *reserveLog) Reserve(off, n int64, keepSize bool) error {
	l.reserved = append(l.reserved, [2]int64{off, n})
	if l.noRoom {
		if err := l.FileEnd.Reserve(off, n/2, keepSize); err != nil {
			return err
		}
		return syscall.ENOSPC
	}
	return l.FileEnd.Reserve(off, n, keepSize)
}

func (l *reserveLog) Unreserve(off, n int64) error {
	l.given = append(l.given, [2]int64{off, n})
	if l.refuse != 0 {
		return l.refuse
	}
	return l.FileEnd.Unreserve(off, n)
}
