// Command ringcp copies block devices, disk images and large files at device
// speed: deep queues of aligned O_DIRECT reads and writes through io_uring,
// an fdatasync barrier at the end, and a pread/pwrite pool where io_uring is
// missing or switched off.
//
//	ringcp [flags] SRC DST
//	ringcp dd if=SRC of=DST [bs=N count=N skip=N seek=N ...]
//	ringcp demo
//	ringcp --version
//
// The command itself is package cli; this is the process around it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/ringcp/ringcp/cli"
)

func main() {
	// SIGUSR1's default action kills the process: its handler goes in
	// before anything else, so that `kill -USR1` (a status request, as
	// with dd) never ends a copy.
	cli.TakeStatusRequests()
	defer exitOnPanic()
	// A stderr whose reader went away must not kill a copy (cli's
	// stopSignals says why).
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitOnPanic turns a panic of the command's goroutine into exit status 1
// ("failed") with its stack: the Go runtime would exit 2, which ringcp
// keeps for "refused, nothing written".
func exitOnPanic() {
	if v := recover(); v != nil {
		fmt.Fprintf(os.Stderr, "ringcp: internal error: %v\n%s", v, debug.Stack())
		os.Exit(cli.ExitFailed)
	}
}
