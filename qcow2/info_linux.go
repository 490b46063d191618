package qcow2

import "syscall"

// diskSize is the host bytes t's file takes, from st_blocks, or -1.
func diskSize(t Transport) int64 {
	st, ok := t.(stater)
	if !ok {
		return -1
	}
	fi, err := st.Stat()
	if err != nil {
		return -1
	}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return s.Blocks * 512
	}
	return -1
}
