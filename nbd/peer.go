package nbd

import "net"

// Peer is what a Client's first connection says of where it arrived, for
// telling whether two clients reach one server (copier's same-export
// check): the socket's two addresses.
type Peer struct {
	Network       string // "tcp" or "unix"
	Local, Remote net.Addr
}

// Peer describes where the first connection arrived.
func (cl *Client) Peer() Peer { return cl.peer }

// peerOf reads a freshly dialed connection's addresses.
func peerOf(network string, nc net.Conn) Peer {
	return Peer{Network: network, Local: nc.LocalAddr(), Remote: nc.RemoteAddr()}
}
