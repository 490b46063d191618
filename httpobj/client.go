package httpobj

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// errRedirects is CheckRedirect's answer past the limit.
var errRedirects = errors.New("stopped")

// errDowngrade is CheckRedirect's answer to a redirect from https to http.
var errDowngrade = errors.New("redirect from https to http refused")

// newClient is the client every request of one object goes through: a
// pool of Connections kept-alive connections to each host, HTTP/2 when the
// server offers it through ALPN, no transparent decompression (the bytes
// are the object's as published: a .gz stays gzip), the proxy the
// environment names, and the TLS settings.
func newClient(s *settings) (*http.Client, error) {
	tlsConf, err := tlsConfig(s)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: s.StallTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               s.Proxy,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: s.StallTimeout,
		// A custom TLS config turns HTTP/2 off unless asked for.
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
		MaxConnsPerHost:     s.Connections,
		MaxIdleConnsPerHost: s.Connections,
		IdleConnTimeout:     90 * time.Second,
		// Bodies are read into the caller's large buffers directly; a
		// larger buffer only helps the headers and small reads.
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 16 << 10,
	}
	client := &http.Client{Transport: tr}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > s.MaxRedirects {
			return errRedirects
		}
		// The object's bytes would travel unprotected, and could be
		// changed on the way without the pin noticing.
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return errDowngrade
		}
		if s.Sign != nil {
			// A signature is for one host and path.
			return http.ErrUseLastResponse
		}
		return nil
	}
	return client, nil
}

// tlsConfig is the system's CAs, or CAFile's instead; a client
// certificate when given; no verification only when Insecure says so.
func tlsConfig(s *settings) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: s.Insecure}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", s.CAFile)
		}
		conf.RootCAs = pool
	}
	if s.CertFile != "" {
		key := s.KeyFile
		if key == "" {
			key = s.CertFile
		}
		cert, err := tls.LoadX509KeyPair(s.CertFile, key)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %v", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	} else if s.KeyFile != "" {
		return nil, errors.New("a client key without a client certificate")
	}
	return conf, nil
}
