package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
)

// TestRateOtherUsersCopy: root's `ringcp rate PID` for a process of
// another user is refused, and says why: the copy's control file is in
// its own user's folder, which root's `ringcp rate` does not read. It
// said "process N is not a running ringcp copy", and the help said root
// may change any copy's cap. No signal goes to the process.
func TestRateOtherUsersCopy(t *testing.T) {
	blocktest.NeedRoot(t)
	t.Setenv("RINGCP_RUNDIR", filepath.Join(t.TempDir(), "run"))
	sleep := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Skipf("setpriv: %v", err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := strconv.Itoa(sleep.Process.Pid)
	waitUntil(t, func() bool { // setpriv changed its user and ran sleep
		exe, _ := os.Readlink("/proc/" + pid + "/exe")
		return filepath.Base(exe) == "sleep"
	})
	cli(t, "rate", pid, "1M").want(t, 2, "runs as uid 65534: only that user may change its rate cap")
}
