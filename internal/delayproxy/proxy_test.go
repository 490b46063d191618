package delayproxy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// echoServer echoes every connection until the client shuts its side.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	return ln.Addr().String()
}

// TestBytesAndDelay: bytes pass through whole and in order, both ways,
// over a window smaller than the data; a round trip takes at least the
// RTT; a half-close passes through.
func TestBytesAndDelay(t *testing.T) {
	const rtt = 30 * time.Millisecond
	p, err := Start(echoServer(t), rtt, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < rtt {
		t.Fatalf("a round trip took %v, less than the RTT %v", took, rtt)
	}

	want := make([]byte, 1<<20+3)
	for i := range want {
		want[i] = byte(rand.N(256))
	}
	go func() {
		c.Write(want)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes back, want the %d sent", len(got), len(want))
	}
	if p.Accepted() != 1 {
		t.Fatalf("Accepted %d, want 1", p.Accepted())
	}
}

// TestCloseCutsConnections: Close ends connections in use and returns.
func TestCloseCutsConnections(t *testing.T) {
	p, err := Start(echoServer(t), time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x"))
	io.ReadFull(c, make([]byte, 1))
	p.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection still works after Close")
	}
}
