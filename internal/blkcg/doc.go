// Package blkcg reads the block I/O limits that a process's cgroups put on
// a disk: cgroup v1's blkio.throttle.{read,write}_{bps,iops}_device and
// cgroup v2's io.max, in the process's own cgroup and in every one above
// it up to the root of the hierarchy. The kernel enforces each level, so
// the least value of every level is the limit.
//
// It only reads, and knows nothing of copies: copier fits its block size
// and depth to what it finds. Tests point Sys at a fake /proc/self and
// cgroup tree.
package blkcg
