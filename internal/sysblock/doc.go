// Package sysblock reads what sysfs says about block devices: a device's
// folder by its number, whether it is a partition, its disk and where it
// starts there, a disk's partitions, the drivers stacked on it (holders),
// its request queue's limits, its I/O counters (stat), what backs a loop
// device, and the devices of mounted btrfs file systems.
//
// It is the one sysfs reader of ringcp: align/ asks it for queue limits,
// guard/ for partitions, holders and loop devices, copier/, iocount/ and
// the bench for I/O counters. It only reads, and it
// knows nothing of copies. Tests point Root at a fake tree built by
// sysfstest.
package sysblock
