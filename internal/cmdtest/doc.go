// Package cmdtest is what the tests of the ringcp command share, in
// process (package cli's tests, through cli.Run) and as a process of its
// own (e2e, copier's kill tests): the command built once from this module,
// a TestMain wrapper that leaves nothing behind, and the checks such tests
// make on files (random contents, digests, "nothing was written").
package cmdtest
