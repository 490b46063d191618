//go:build !linux

package syncproto

import "syscall"

func sshAttr() *syscall.SysProcAttr { return nil }

// signalGroup signals ssh alone: it has no group of its own here.
func (c *Conn) signalGroup(sig syscall.Signal) { c.cmd.Process.Signal(sig) }
