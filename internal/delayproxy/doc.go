// Package delayproxy is a TCP proxy on loopback that adds a round-trip
// time between a client and a server, for tests and benchmarks of network
// ends (HTTP, S3, NBD) at WAN latencies. There is no netem on the test
// machine, and loopback has no latency at all, so a client's real costs
// (a round trip per request, a congestion window per connection) never
// show without it.
//
// Each direction of each connection delays every chunk of bytes by half
// the round-trip time, in order, and keeps at most Window bytes
// unacknowledged: a byte counts until a full round trip after it was read,
// as a TCP sender's byte counts until its ACK comes back. One connection
// thus moves at most Window/RTT bytes per second, the limit a real TCP
// connection over such a link meets; more connections, more throughput.
// Loopback's own buffers would otherwise hide the latency from the sender.
package delayproxy
