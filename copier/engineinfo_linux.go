package copier

import "github.com/ringcp/ringcp/engine"

// UringAvailable says, before anything is written, whether io_uring can
// be used here, and when it cannot, why (switched off by sysctl, refused
// by seccomp, missing from the kernel). It is not cached: an admin may
// switch io_uring off while a long-lived process runs.
func UringAvailable() error { return engine.UringAvailable() }
