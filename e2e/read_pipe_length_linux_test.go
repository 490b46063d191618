package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReadPassPipeNeedsLength: checksum and verify of "-" from a pipe,
// whose size is not known before it ends, are refused, naming --length,
// at once. Before, the read pass took the pipe for 16 TiB (a copy's
// open-ended cap), read zeros past its end for half an hour and would
// have printed the checksum of 16 TiB. With --length they read the
// stream.
func TestReadPassPipeNeedsLength(t *testing.T) {
	fx := newFixture(t)
	for _, args := range [][]string{{"checksum", "--json", "-"}, {"verify", "--json", "-", fx.Src}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), args...)
		cmd.Stdin = strings.NewReader("abc")
		r := runToEnd(t, cmd)
		cancel()
		r.want(t, exitRefused, "--length")
	}
	cmd := exec.Command(binary(t), "checksum", "--length", "3", "-")
	cmd.Stdin = strings.NewReader("abc")
	r := runToEnd(t, cmd)
	r.want(t, exitOK)
	if !strings.Contains(r.stdout, "f6674caaed0b83eae0ae556b6c7d45a12463413a4822152989a0c78c9428f4f3") {
		t.Errorf("checksum of abc: %s", r.stdout) // the imageio checksum of the 3 bytes, as of a file holding them
	}
}
