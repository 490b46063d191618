package syncproto

import (
	"os"
	"testing"
)

// serveEnv makes this test binary act as `ringcp sync --serve` when ssh
// starts it on the "other host" (see ringcpWrapper): the real protocol
// server, in the real process layout, without building the command.
const serveEnv = "RINGCP_SYNCPROTO_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" && len(os.Args) > 1 && os.Args[1] == "sync" {
		os.Exit(ServeMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
