package stream

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pipeSize is what a pipe we read from is grown to: 1 MiB, the default
// limit for unprivileged processes (/proc/sys/fs/pipe-max-size). A writer
// then fills 16 times more before it waits on us, and we read in larger
// pieces: fewer wake-ups on both sides (64 KiB by default).
const pipeSize = 1 << 20

func growPipe(f *os.File) {
	// Best effort: a smaller pipe is only slower.
	control(f, func(fd int) { unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize) })
}

// control runs do on f's descriptor. Not f.Fd(): that puts a descriptor
// in Go's poller back into blocking mode, where a read deadline
// (Interrupt) no longer ends a read.
func control(f *os.File, do func(fd int)) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { do(int(fd)) })
	}
}

// pollable is f (a pipe or terminal inherited as a blocking descriptor,
// which Go reads with a blocking read(2) that nothing interrupts) opened
// again through /proc/self/fd: a new open file description of the same
// pipe, non-blocking, in Go's poller, whose reads a deadline ends. The
// inherited description is left as it was (others may share it: the
// shell's terminal). O_NONBLOCK on the open, or the open of a pipe whose
// writer already went would wait for another (read, it still gives what
// the pipe holds, then its end); O_NOCTTY: a terminal does not become
// ours. f itself where that cannot be done (a socket: ENXIO; a pipe of
// another user's: EACCES).
func pollable(f *os.File) *os.File {
	fd := -1
	control(f, func(d int) { fd = d })
	again, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return f
	}
	var a, b unix.Stat_t
	var errA, errB error = unix.ENOTSUP, unix.ENOTSUP
	control(f, func(d int) { errA = unix.Fstat(d, &a) })
	control(again, func(d int) { errB = unix.Fstat(d, &b) })
	if errA != nil || errB != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		again.Close()
		return f
	}
	return again
}
