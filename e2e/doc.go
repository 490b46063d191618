// Package e2e tests ringcp end to end: the command as a process of its
// own (built once by internal/cmdtest, started in the background by the
// harness in background_linux_test.go), or in process through cli.Run
// where no process is needed, against real ends and real peers: loop
// devices, filesystems, FUSE faults, cgroups, NBD servers, QEMU, GNU dd,
// and other local users (made with useradd) for what they can plant
// beside a victim's copy. It holds tests only; each file is named for
// what its tests cover.
package e2e
