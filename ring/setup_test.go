package ring

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
)

func TestSetupReportsGrantedFlags(t *testing.T) {
	r := newRing(t, 8, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun | FlagTaskrunFlag})
	if r.SQEntries() != 8 {
		t.Errorf("SQEntries = %d, want 8", r.SQEntries())
	}
	if r.CQEntries() != 16 {
		t.Errorf("CQEntries = %d, want 16 (twice the SQ)", r.CQEntries())
	}
	// This kernel (6.1+) grants DEFER_TASKRUN; the ring must say so.
	if got := r.Flags(); got&FlagDeferTaskrun == 0 || got&FlagSingleIssuer == 0 {
		t.Errorf("Flags = %v, want DEFER_TASKRUN|SINGLE_ISSUER granted", got)
	}
	if r.Features()&FeatSingleMmap == 0 || r.Features()&FeatNoDrop == 0 {
		t.Errorf("Features = %#x, want SINGLE_MMAP and NODROP on this kernel", r.Features())
	}
}

func TestSetupRoundsEntriesAndSizesCQ(t *testing.T) {
	r := newRing(t, 5, &Options{CQEntries: 100})
	if r.SQEntries() != 8 {
		t.Errorf("SQEntries = %d, want 8 (5 rounded up)", r.SQEntries())
	}
	if r.CQEntries() != 128 {
		t.Errorf("CQEntries = %d, want 128 (100 rounded up)", r.CQEntries())
	}
	if r.Flags()&FlagCQSize == 0 {
		t.Errorf("Flags = %v, want CQSIZE", r.Flags())
	}
}

// DEFER_TASKRUN without SINGLE_ISSUER is rejected by the kernel with EINVAL:
// a real rejection, which Setup must degrade instead of failing.
func TestSetupDropsFlagTheKernelRejects(t *testing.T) {
	r := newRing(t, 4, &Options{Flags: FlagDeferTaskrun | FlagCoopTaskrun})
	if r.Flags()&FlagDeferTaskrun != 0 {
		t.Errorf("Flags = %v: DEFER_TASKRUN without SINGLE_ISSUER should have been dropped", r.Flags())
	}
	if r.Flags()&FlagCoopTaskrun == 0 {
		t.Errorf("Flags = %v: COOP_TASKRUN should have survived", r.Flags())
	}
	if cqe := submitOne(t, r, func(s *SQE) { s.PrepNop() }); cqe.Res != 0 {
		t.Errorf("NOP res = %d", cqe.Res)
	}
}

func TestSetupRequiredFlagIsNotDropped(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, err := Setup(4, &Options{Flags: FlagDeferTaskrun, Require: FlagDeferTaskrun})
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Setup with a required impossible flag: err = %v, want EINVAL", err)
	}
}

// An older kernel rejects newer flags with EINVAL; the injected setup call
// plays one that knows nothing after 5.5.
func TestSetupDegradesOnOldKernel(t *testing.T) {
	real := setupSyscall
	t.Cleanup(func() { setupSyscall = real })
	var tried []SetupFlags
	setupSyscall = func(entries uint32, p *params) (int, syscall.Errno) {
		tried = append(tried, SetupFlags(p.Flags))
		if SetupFlags(p.Flags)&^FlagCQSize != 0 {
			return -1, syscall.EINVAL
		}
		return real(entries, p)
	}
	r := newRing(t, 8, &Options{
		Flags:     FlagSingleIssuer | FlagDeferTaskrun | FlagCoopTaskrun | FlagTaskrunFlag | FlagClamp,
		CQEntries: 32,
	})
	if r.Flags() != FlagCQSize {
		t.Errorf("Flags = %v, want CQSIZE only", r.Flags())
	}
	if len(tried) != 5 {
		t.Errorf("tried %d flag sets (%v), want 5: one drop per group", len(tried), tried)
	}
	if r.CQEntries() != 32 {
		t.Errorf("CQEntries = %d, want 32", r.CQEntries())
	}
}

func TestSetupRejectsBadEntries(t *testing.T) {
	for _, n := range []uint32{0, maxEntries + 1} {
		if _, err := Setup(n, nil); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Setup(%d): err = %v, want EINVAL", n, err)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	r, err := Setup(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Submit(); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("Submit after Close: %v, want EBADF", err)
	}
}

func TestFlagsString(t *testing.T) {
	cases := map[SetupFlags]string{
		0:                                   "none",
		FlagDeferTaskrun | FlagSingleIssuer: "SINGLE_ISSUER|DEFER_TASKRUN",
		FlagCQSize | 1<<30:                  "CQSIZE|0x40000000",
	}
	for f, want := range cases {
		if got := f.String(); got != want {
			t.Errorf("%#x.String() = %q, want %q", uint32(f), got, want)
		}
	}
}

func TestGetSQEAfterCloseIsNil(t *testing.T) {
	r, err := Setup(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r.GetSQE() != nil {
		t.Fatal("GetSQE on a closed ring returned an SQE")
	}
}
