package syncproto

import "syscall"

// sshAttr starts ssh in a session of its own, without a controlling
// terminal. So a Ctrl-C on the terminal reaches ringcp alone, which then
// ends the session in order (Conn.Close); and nothing ssh starts can ask
// a question on the terminal. BatchMode, on ssh's command line, does not
// reach the ssh a ProxyJump starts, which asks about an unknown key or
// for a password on /dev/tty: in a process group of its own, in the
// terminal's background, that ssh was stopped (SIGTTOU, SIGTTIN) and the
// sync hung; without a terminal it fails, and the sync says why. No
// Pdeathsig: it fires when the thread that started ssh ends, which in Go
// is not the process ending; should ringcp die, ssh reads EOF on its
// stdin, passes it on, and the remote ringcp ends.
func sshAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// signalGroup sends sig to ssh's process group, which sshAttr made: what
// ssh started (a ProxyCommand) gets it too. The group outlives ssh while
// one of them lives, and its id is not reused meanwhile.
func (c *Conn) signalGroup(sig syscall.Signal) {
	syscall.Kill(-c.cmd.Process.Pid, sig)
}
