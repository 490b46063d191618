package copier

import (
	"bytes"
	"fmt"
	"net"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/nbd"
	"golang.org/x/sys/unix"
)

// Two NBD URIs may name one export in many ways: nbd://127.0.0.1:P/x,
// nbd://[::1]:P/x and nbd://127.0.0.2:P/x reach one server listening on
// every local address (issue 20: SRC was overwritten while being read,
// exit 0), and nbdkit serves the same disk under any export name. Nothing in the protocol
// names a disk, so the check works from what can be known:
//
//   - whether both ends reach one server, by the listening socket their
//     connections arrived at: a Unix socket's file (its inode); for TCP
//     to an address of this host, the listening socket in /proc/net/tcp
//     that takes that address and port (so 127.0.0.1, ::1 and 127.0.0.2
//     meet at one socket bound to every address), or the process that
//     holds it (nbdkit -p binds an IPv4 and an IPv6 socket: two sockets
//     held by one process are one server); for TCP to another
//     host, the address and port connected to, after resolving the name.
//     Not the server's process: SO_PEERCRED names whoever called
//     listen() (systemd, for a socket-activated server), and a forking
//     server (nbd-server) answers each connection from another process;
//   - on one server, the same export name is one export;
//   - on one server, two names are two exports only if something proves
//     it: different sizes (one disk has one size), or different bytes at
//     the same offsets. A probe reads a few blocks of both, A then B then
//     A again; a block that reads the same from A twice and otherwise
//     from B proves two disks, unless someone else wrote to B between the
//     reads, which a copy's SRC must not have anyway. Blocks that read
//     the same prove nothing: a clone and its source, or two empty disks,
//     read the same. A probe never writes: writing would prove sameness,
//     but nothing is written before every check is done.
//
// So a copy between two exports of one server whose bytes cannot be told
// apart is treated as a copy onto itself: refused where the ranges
// overlap. Two addresses of one remote host (two interfaces) are not
// recognized as one server: nothing tells them apart from two hosts; nor
// is a server that listens on a Unix socket and a TCP port at once (none
// of qemu-nbd, qemu-storage-daemon and nbdkit does).

// probeSamples is how many blocks of both exports the probe compares, and
// probeBytes the most bytes read of each.
const (
	probeSamples = 16
	probeBytes   = 64 << 10
)

// sameWhy says two export ends may be one export, and for people what
// they are.
func (e *exportEnd) sameWhy(o *exportEnd) (bool, string) {
	one, server := oneServer(e, o)
	switch {
	case !one:
		return false, ""
	case e.addr.Export == o.addr.Export:
		return true, fmt.Sprintf("the same NBD export (%q of one server, %s)", e.addr.Export, server)
	case e.info.Size != o.info.Size:
		return false, ""
	case e.x != nil && o.x != nil && probeApart(e.x.Client(), o.x.Client()):
		return false, ""
	}
	return true, fmt.Sprintf("maybe the same NBD export (%q and %q of one server, %s, which nothing tells apart: the same size, the same bytes at %d offsets; nbdkit serves one disk under any name)",
		e.addr.Export, o.addr.Export, server, probeSamples)
}

// oneServer says whether both ends reach one server, and names it.
func oneServer(e, o *exportEnd) (bool, string) {
	a, b := serverOf(e), serverOf(o)
	return a != "" && a == b, a
}

// serverOf names the listening socket an end's first connection arrived
// at: a Unix socket by its file's inode; for TCP to an address of this
// host, the listening socket that took it (guard.TCPListener), else its
// port on this host; for another host, the address and port connected to.
func serverOf(e *exportEnd) string {
	p := e.peer
	if p.Network == "unix" {
		var st unix.Stat_t
		if unix.Stat(e.addr.Addr, &st) != nil {
			return "socket " + e.addr.Addr // abstract, or gone
		}
		return fmt.Sprintf("the socket file of inode %d on %#x", st.Ino, st.Dev)
	}
	t, ok := p.Remote.(*net.TCPAddr)
	if !ok {
		return ""
	}
	remote := t.AddrPort()
	if !guard.LocalAddr(remote.Addr()) {
		return "address " + remote.String()
	}
	if inode := guard.TCPListener(remote); inode != 0 {
		// nbdkit -p listens with a socket per address family: 127.0.0.1
		// and [::1] meet at two sockets of one process.
		if pids := guard.SocketHolders(inode); len(pids) > 0 {
			return fmt.Sprintf("the server listening on port %d of this host (process %d)", remote.Port(), pids[0])
		}
		return fmt.Sprintf("the socket listening on port %d of this host, inode %d", remote.Port(), inode)
	}
	// Not seen (another network namespace): one port of this host is
	// one listening socket, unless two servers bound two of its
	// addresses to it.
	return fmt.Sprintf("port %d of this host", remote.Port())
}

// probeApart reads the same sample blocks of a and b (which have one
// size) and says whether one proves them two disks; a read that fails
// proves nothing.
func probeApart(a, b *nbd.Client) bool {
	size := a.Info().Size
	unit := int64(max(a.Info().BlockSize.Min, b.Info().BlockSize.Min))
	n := min(int64(probeBytes), size)
	n -= n % unit
	if n <= 0 {
		return false
	}
	bufA, bufB, again := make([]byte, n), make([]byte, n), make([]byte, n)
	for i := int64(0); i < probeSamples; i++ {
		off := (size - n) * i / (probeSamples - 1)
		off -= off % unit
		if _, err := a.ReadAt(bufA, off); err != nil {
			return false
		}
		if _, err := b.ReadAt(bufB, off); err != nil {
			return false
		}
		if bytes.Equal(bufA, bufB) {
			continue
		}
		if _, err := a.ReadAt(again, off); err == nil && bytes.Equal(bufA, again) {
			return true
		}
	}
	return false
}
