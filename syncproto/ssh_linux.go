package syncproto

import "syscall"

// sshAttr puts ssh in a process group of its own, so that a Ctrl-C on
// the terminal reaches ringcp alone, which then ends the session in
// order (Conn.Close). No Pdeathsig: it fires when the thread that
// started ssh ends, which in Go is not the process ending; should
// ringcp die, ssh reads EOF on its stdin, passes it on, and the remote
// ringcp ends.
func sshAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
