//go:build !linux

package syncproto

import "syscall"

func sshAttr() *syscall.SysProcAttr { return nil }
