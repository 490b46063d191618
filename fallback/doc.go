// Package fallback is the engine's pread/pwrite backend: a pool of
// goroutines, one per slot, that perform each request with a blocking
// system call and report it as a completion. It runs wherever io_uring does
// not (kernels before 5.1, kernel.io_uring_disabled, seccomp sandboxes) and
// keeps the engine's contract: same buffers, same short-transfer and errno
// reporting, completions in any order.
package fallback
