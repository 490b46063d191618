// Package fallback is the engine's pool backend: goroutines, one per slot,
// that perform each request with a blocking call and report it as a
// completion. It runs wherever io_uring does not (kernels before 5.1,
// kernel.io_uring_disabled, seccomp sandboxes) and keeps the engine's
// contract: same buffers, same short-transfer and errno reporting,
// completions in any order.
//
// It is also the backend of every end that is not a descriptor
// (engine.IOEnd: an NBD export, and the kinds to come): a request on a
// descriptor is pread, pwrite, fdatasync or fallocate (Do); one on an
// IOEnd is its ReadAt, WriteAt, Flush or Zero (doEnd), in any mix within
// one copy. An end that can only be read in order (IOInfo.Sequential) is
// served one request at a time, in offset order, by a sequencer that
// keeps what a late request may still ask for (sequential.go).
package fallback
