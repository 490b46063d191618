// Package cli is the ringcp command: main.go calls Run with the process's
// arguments and streams and exits with what it returns.
//
// Run reads the command line into copier.Options, through flags bound
// straight to its fields (optionFlags: one table, which also names a
// field's flag when copier refuses a value), runs the copy or the
// subcommand (dd, verify, checksum, rate, demo, --jobs), renders its
// progress, summary and --json, and decides the exit code (exitCode,
// alone): 0 complete, 1 failed, 2 refused, 3 mismatch, 128+N stopped by
// signal N. Values are copier's to check; the command checks only what
// copier cannot see (operands, its own flags, a 0 given where a field's 0
// means "choose").
package cli
