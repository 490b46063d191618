// Package webtest starts real web servers (nginx, lighttpd) for tests and
// benchmarks of HTTP ends: each serves a folder the test filled, with a
// configuration written into the test's temporary folder, on a free
// loopback port, in its own process group, and is killed when the test
// ends. TLS credentials (a new CA, a server certificate for localhost and
// 127.0.0.1, a client certificate) are made by the test. A missing server
// binary skips the test with the reason (CI installs them: .ci/run).
package webtest
