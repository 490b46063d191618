// Package stream is what a copy reads in order: standard input or a named
// pipe (Pipe), a count of the bytes that went by (Counter), and a
// sequential reader over a ranged source that keeps several ranges in
// flight ahead of the reader (ReadAhead), which is how a decompressor
// reads an HTTP or S3 object at the speed of many connections.
package stream
