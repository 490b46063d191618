package stream

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is what a pipe we read from is grown to: 1 MiB, the default
// limit for unprivileged processes (/proc/sys/fs/pipe-max-size). A writer
// then fills 16 times more before it waits on us, and we read in larger
// pieces: fewer wake-ups on both sides (64 KiB by default).
const pipeSize = 1 << 20

func growPipe(f *os.File) {
	// Best effort: a smaller pipe is only slower.
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
}
