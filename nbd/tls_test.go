package nbd

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// TLS against real servers: nbdkit and qemu-nbd with X.509 credentials
// made for the test, over TCP and a Unix socket.

// TestTLSRoundTrip: data written through an nbds connection (several
// connections, each with its own STARTTLS) reads back the same, from
// nbdkit and from qemu-nbd, over both transports.
func TestTLSRoundTrip(t *testing.T) {
	dir := nbdtest.TLSDir(t)
	for _, tr := range transports {
		t.Run("nbdkit/"+string(tr), func(t *testing.T) {
			needBin(t, "nbdkit")
			uri := nbdkit(t, tr, "--tls=require", "--tls-certificates="+dir, "memory", "4M")
			tlsRoundTrip(t, nbdtest.Secure(uri, dir))
		})
		t.Run("qemu-nbd/"+string(tr), func(t *testing.T) {
			needBin(t, "qemu-nbd")
			img := t.TempDir() + "/disk.raw"
			qemuImg(t, "create", "-q", "-f", "raw", img, "4M")
			uri := qemuNBD(t, tr, "raw", img, "--object", "tls-creds-x509,id=tls0,endpoint=server,dir="+dir, "--tls-creds", "tls0")
			tlsRoundTrip(t, nbdtest.Secure(uri, dir))
		})
	}
}

func tlsRoundTrip(t *testing.T, uri string) {
	t.Helper()
	c := dial(t, uri, Options{Connections: 2})
	data := bytes.Repeat([]byte("ringcp over TLS "), 65536) // 1 MiB
	if _, err := c.WriteAt(data, 4096); err != nil {
		t.Fatalf("%s: write: %v", uri, err)
	}
	if err := c.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", uri, err)
	}
	got := make([]byte, len(data))
	if _, err := c.ReadAt(got, 4096); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%s: read back: %v (equal %v)", uri, err, bytes.Equal(got, data))
	}
}

// TestTLSRefusals: a server whose certificate another CA signed, a TLS
// server named without TLS, a server without TLS named with it, and a
// server that checks its clients met without a client certificate: each
// fails the connection with a message that says why. tls-verify-peer=0
// connects to the first anyway.
func TestTLSRefusals(t *testing.T) {
	needBin(t, "nbdkit")
	dir, other := nbdtest.TLSDir(t), nbdtest.TLSDir(t)
	secure := nbdkit(t, overTCP, "--tls=require", "--tls-certificates="+dir, "memory", "1M")
	plain := nbdkit(t, overTCP, "--tls=off", "memory", "1M")
	peers := nbdkit(t, overUnix, "--tls=require", "--tls-certificates="+dir, "--tls-verify-peer", "memory", "4M")
	noClientCert := t.TempDir()
	ca, err := os.ReadFile(dir + "/ca-cert.pem")
	if err == nil {
		err = os.WriteFile(noClientCert+"/ca-cert.pem", ca, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, uri, says string }{
		{"another CA", nbdtest.Secure(secure, other), "certificate signed by unknown authority"},
		{"plain URI", secure, "the server requires TLS: name it with nbds://"},
		{"server without TLS", nbdtest.Secure(plain, dir), "the server does not offer TLS"},
		{"no client certificate", nbdtest.Secure(peers, noClientCert), "does it want a client certificate?"},
		{"missing folder", nbdtest.Secure(secure, dir+"/nowhere"), "nowhere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cl, err := Dial(ctx, c.uri, Options{Timeout: 5 * time.Second})
			if err == nil {
				cl.Close()
				t.Fatalf("%s: connected", c.uri)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Fatalf("%s: %v: want it to say %q", c.uri, err, c.says)
			}
		})
	}
	c := dial(t, nbdtest.Secure(secure, other)+"&tls-verify-peer=0", Options{})
	if _, err := c.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("tls-verify-peer=0: %v", err)
	}
	tlsRoundTrip(t, nbdtest.Secure(peers, dir)) // with the client certificate
}
