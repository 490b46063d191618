package copier

import (
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// An export's server on this host may serve the very file or device the
// other end of the copy names: nbdkit's file plugin opens it for each
// client and takes no lock (QEMU's locks tell qemu-nbd already), so
// ringcp s.img nbd+unix:///?socket=S, S serving s.img, overwrote SRC
// while reading it, exit 0 (issue 20's second review). Such a pair is one
// object: exportEnd.same says so, and the copy is refused where the
// ranges overlap. The server is whoever holds its listening socket (a
// Unix socket's, from /proc/net/unix, or a local TCP port's); a server of
// another user's is seen only by root.

// localObject is an end that is a file or device of this host (the file
// kind's), which a server here may hold open under another name.
type localObject interface {
	// object is what the end is, ok false for a new DST (nothing yet).
	object() (obj guard.Object, ok bool)
}

// serverHolders are the processes of this host that hold the export's
// listening socket, looked for once per end (a batch asks of every
// other job's ends).
type serverHolders struct {
	once sync.Once
	pids []int
}

// holders lists the processes holding e's listening socket: none for a
// server elsewhere, or one not seen.
func (e *exportEnd) holders() []int {
	e.served.once.Do(func() {
		var inode uint64
		if e.peer.Network == "unix" {
			inode = guard.UnixListener(e.addr.Addr)
		} else if t, ok := e.peer.Remote.(*net.TCPAddr); ok && guard.LocalAddr(t.AddrPort().Addr()) {
			inode = guard.TCPListener(t.AddrPort())
		}
		if inode != 0 {
			e.served.pids = guard.SocketHolders(inode)
		}
	})
	return e.served.pids
}

// servesLocal says that e's server holds o, a local file or device, open,
// and what for people.
func (e *exportEnd) servesLocal(o *endpoint) (bool, string) {
	l, ok := o.end.(localObject)
	if !ok {
		return false, ""
	}
	obj, ok := l.object()
	if !ok {
		return false, ""
	}
	match := func(st *unix.Stat_t) bool { return guard.ObjectOf(st) == obj }
	for _, pid := range e.holders() {
		if pid != os.Getpid() && guard.HoldsOpen(pid, match) {
			return true, fmt.Sprintf("maybe the same data: the server of the NBD export %s (pid %d) has %s open", e.addr.URI, pid, o.path)
		}
	}
	return false, ""
}
