package guard

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LocalAddr says whether ip is one of this host's: loopback (127.0.0.0/8,
// ::1) or an address of one of its interfaces. A TCP server at such an
// address listens here, in this network namespace.
func LocalAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if mine, ok := netip.AddrFromSlice(n.IP); ok && mine.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// TCPListener is the inode of the listening socket of this host that
// takes connections to addr (an address of this host, LocalAddr): one
// bound to that very address, else one bound to every address (0.0.0.0
// for IPv4, or :: which takes IPv4 too), as the kernel picks; read from
// /proc/net/tcp and tcp6, which every user may read. Two connections that
// arrived at one listening socket reached one server, whichever address
// each named. 0 when none is found (a server in another network
// namespace).
func TCPListener(addr netip.AddrPort) uint64 {
	ip := addr.Addr().Unmap()
	var exact, any4, any6 uint64
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, l := range listeners(table) {
			at := l.addr.Addr().Unmap()
			switch {
			case l.addr.Port() != addr.Port():
			case at == ip:
				exact = l.inode
			case at == netip.IPv4Unspecified():
				any4 = l.inode
			case at == netip.IPv6Unspecified():
				any6 = l.inode
			}
		}
	}
	switch {
	case exact != 0:
		return exact
	case ip.Is4() && any4 != 0:
		return any4
	}
	return any6
}

// listener is a listening socket: its address and inode.
type listener struct {
	addr  netip.AddrPort
	inode uint64
}

// listeners reads the listening sockets of a /proc/net/tcp table.
func listeners(table string) []listener {
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ls []listener
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != "0A" { // TCP_LISTEN
			continue
		}
		a, ok := procAddr(fs[1])
		inode, err := strconv.ParseUint(fs[9], 10, 64)
		if ok && err == nil && inode != 0 {
			ls = append(ls, listener{a, inode})
		}
	}
	return ls
}

// procAddr reads an address of /proc/net/tcp: the IP as 32-bit words in
// the host's byte order, each printed in hex, then ":" and the port in
// hex.
func procAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(addr, uint16(port)), true
}

// SocketHolders lists the processes that hold the socket of inode open
// (a server's listening socket: /proc/PID/fd/N links to "socket:[inode]"),
// lowest first. A server that listens on one port of every address binds
// a socket per address family (nbdkit -p, an IPv6 socket with
// IPV6_V6ONLY beside an IPv4 one): two listening sockets, one server, the
// process that holds both. Processes of other users are not seen without
// privilege.
func SocketHolders(inode uint64) []int {
	want := fmt.Sprintf("socket:[%d]", inode)
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && link == want {
				pids = append(pids, pid)
				break
			}
		}
	}
	sort.Ints(pids)
	return pids
}

// UnixListener is the inode of the listening Unix socket bound at the
// file path, from /proc/net/unix (a listening socket's flags carry
// __SO_ACCEPTCON); 0 when none is seen. The paths there are as the server
// bound them: each is compared with path by the file it names.
func UnixListener(path string) uint64 {
	var want unix.Stat_t
	if unix.Stat(path, &want) != nil {
		return 0
	}
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return 0
	}
	defer f.Close()
	const acceptCon = 0x10000
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		flags, err1 := strconv.ParseUint(fields[3], 16, 32)
		inode, err2 := strconv.ParseUint(fields[6], 10, 64)
		var st unix.Stat_t
		if err1 != nil || err2 != nil || flags&acceptCon == 0 || unix.Stat(fields[7], &st) != nil {
			continue
		}
		if st.Dev == want.Dev && st.Ino == want.Ino {
			return inode
		}
	}
	return 0
}

// HoldsOpen says whether process pid has a descriptor open on what match
// accepts (a file's device and inode, a block device's number).
func HoldsOpen(pid int, match func(*unix.Stat_t) bool) bool {
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, _ := os.ReadDir(fdDir)
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Stat(filepath.Join(fdDir, fd.Name()), &st) == nil && match(&st) {
			return true
		}
	}
	return false
}
