package nbd

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// TLS (nbds://, nbds+unix://): NBD_OPT_STARTTLS right after the greeting,
// then the TLS handshake (crypto/tls), then the rest of the negotiation
// and every request inside it (proto.md, "TLS support"). A server that
// does not agree fails the connection: an nbds URI never falls back to
// the clear (uri.md). X.509 certificates only: Go's crypto/tls has
// neither pre-shared keys nor anonymous TLS, so tls-type=psk and anon are
// refused.
//
// The URI's parameters (uri.md, and libnbd's tls-certificates):
//
//	tls-type=x509         the only type taken
//	tls-certificates=DIR  ca-cert.pem there is trusted instead of the
//	                      system's roots; client-cert.pem and
//	                      client-key.pem, when there, identify us to a
//	                      server that checks its peers
//	tls-hostname=NAME     the name the server's certificate must carry:
//	                      by default the URI's host, "localhost" for a socket
//	tls-verify-peer=0|1   0 encrypts without checking who the server is
//	                      (no protection against an impostor); default 1

// tlsParams are the query parameters an nbds URI may carry.
var tlsParams = map[string]bool{"tls-type": true, "tls-certificates": true, "tls-hostname": true, "tls-verify-peer": true}

// TLS is how an nbds connection is secured.
type TLS struct {
	CertDir    string // tls-certificates; "" for the system's roots and no client certificate
	ServerName string // the name the server's certificate must carry
	Verify     bool   // check the server's certificate (tls-verify-peer)
}

// parseTLS reads an nbds URI's TLS parameters, decoded; host is the
// URI's ("" for a Unix socket).
func parseTLS(host string, q map[string]string) (*TLS, error) {
	if typ := q["tls-type"]; typ != "" && typ != "x509" {
		return nil, fmt.Errorf("tls-type=%s is %w (X.509 certificates only)", typ, ErrNotSupported)
	}
	t := &TLS{CertDir: q["tls-certificates"], ServerName: cmp.Or(q["tls-hostname"], host, "localhost"), Verify: true}
	switch v := q["tls-verify-peer"]; v {
	case "", "1", "true":
	case "0", "false":
		t.Verify = false
	default:
		return nil, fmt.Errorf("tls-verify-peer=%s: want 0 or 1", v)
	}
	return t, nil
}

// config builds the crypto/tls configuration, once per client: a missing
// or unreadable file fails the dial with its name.
func (t *TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: !t.Verify, MinVersion: tls.VersionTLS12}
	if t.CertDir == "" {
		return cfg, nil
	}
	if _, err := os.Stat(t.CertDir); err != nil {
		return nil, fmt.Errorf("tls-certificates: %w", err)
	}
	caFile := filepath.Join(t.CertDir, "ca-cert.pem")
	ca, err := os.ReadFile(caFile)
	switch {
	case err == nil:
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", caFile)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	cert, key := filepath.Join(t.CertDir, "client-cert.pem"), filepath.Join(t.CertDir, "client-key.pem")
	if _, err := os.Stat(cert); err == nil {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// startTLS asks for TLS and puts the handshake's reader and writer on the
// encrypted connection.
func (h *handshake) startTLS() error {
	r, msg, err := h.option(optStartTLS, nil)
	if err != nil {
		return err
	}
	switch {
	case r.typ == repAck:
	case r.typ&repFlagError != 0:
		return fmt.Errorf("the server does not offer TLS (%s%s), and an nbds URI never falls back to the clear", repName(r.typ), suffix(msg))
	default:
		return protoErrorf("reply type 0x%x to NBD_OPT_STARTTLS", r.typ)
	}
	if h.r.Buffered() > 0 {
		return protoErrorf("the server sent data after acknowledging NBD_OPT_STARTTLS")
	}
	tc := tls.Client(h.nc, h.tls)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	h.nc = tc
	h.r = bufio.NewReaderSize(tc, 64<<10)
	return nil
}

// tlsHangup explains a server that ends a TLS session right after the
// handshake: with TLS 1.3 the server checks our certificate after the
// client's side of the handshake is done, so a refusal shows only as a
// closed connection at the next option.
func tlsHangup(err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w (the server ended the TLS session: does it want a client certificate? tls-certificates must then hold client-cert.pem and client-key.pem)", err)
	}
	return err
}
