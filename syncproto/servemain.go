package syncproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/blocksync"
)

// ServeMain is `ringcp sync --serve`: the other host's half of a sync,
// speaking the protocol on stdin and stdout (which nothing else may
// write to), its messages on stderr, which ssh passes back. args are
// those after "sync". It returns the exit code: 0 synced, 1 failed, 2
// refused (before anything was written) or bad arguments, 3 DST is not
// SRC after all, 128+N stopped by signal N. The command's sync verb
// calls it when it sees --serve.
func ServeMain(args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	opt, err := serveArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "ringcp sync --serve: %v (got %q); it is started by ringcp sync over ssh\n", err, args)
		return 2
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		if sig, ok := <-sigs; ok {
			cancel(stopped{sig.(syscall.Signal)})
		}
	}()
	conn := stdio{stdin, stdout}
	_, err = Serve(ctx, conn, func() { conn.close() }, opt)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "ringcp sync --serve: %v\n", err)
	return exitCode(context.Cause(ctx), err)
}

// serveArgs reads the arguments after "sync": --serve, then the client's
// settings for this side (serve.go's ServeOptions).
func serveArgs(args []string) (ServeOptions, error) {
	var opt ServeOptions
	if len(args) == 0 || args[0] != "--serve" {
		return opt, errors.New("takes --serve first")
	}
	for _, a := range args[1:] {
		v, ok := strings.CutPrefix(a, "--max-rate=")
		if !ok {
			return opt, errors.New("takes no other arguments than --max-rate=N")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return opt, fmt.Errorf("--max-rate=%s: want a positive count of bytes a second", v)
		}
		opt.MaxRate = n
	}
	return opt, nil
}

// stopped is a signal that stopped the server.
type stopped struct{ sig syscall.Signal }

func (s stopped) Error() string { return "stopped by " + s.sig.String() }

// exitCode maps a server's error to its exit status.
func exitCode(cause, err error) int {
	var (
		st  stopped
		ref *blocksync.RefusedError
		mis *MismatchError
	)
	switch {
	case errors.As(cause, &st):
		return 128 + int(st.sig)
	case errors.As(err, &ref):
		return 2
	case errors.As(err, &mis):
		return 3
	}
	return 1
}

// stdio is the server's connection.
type stdio struct {
	io.Reader
	io.Writer
}

// close closes what can be closed, so that a write blocked on a full
// pipe fails.
func (s stdio) close() {
	for _, x := range []any{s.Reader, s.Writer} {
		if c, ok := x.(io.Closer); ok {
			c.Close()
		}
	}
}
