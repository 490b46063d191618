package cdi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProgressMetric is the counter CDI's controller scrapes from an importer
// pod, in percent, labelled with OWNER_UID.
const ProgressMetric = "kubevirt_cdi_import_progress_total"

// Metrics serves the import's progress over HTTPS, as CDI's importer does:
// every path answers with the Prometheus text (the controller asks for
// /metrics), behind a certificate made at start (the controller accepts
// any).
//
// The text is written here, not by prometheus/client_golang: its
// protobuf dependency opens the executable in an init function, before
// main, and under a tight ulimit -n that open made every ringcp command
// die in the Go runtime with a stack trace instead of ringcp's one-line
// refusal (e2e TestRunsOutOfDescriptors). One counter needs four lines.
type Metrics struct {
	server   *http.Server
	listener net.Listener
	served   chan error
	label    string // the ownerUID label's value, escaped

	mu      sync.Mutex
	percent float64 // what the counter holds
}

// StartMetrics listens on addr (":8443" in a pod; "127.0.0.1:0" in
// tests) and serves the progress of the import of ownerUID, starting at
// 0. An address that cannot be listened on is an error here, not later.
func StartMetrics(addr, ownerUID string) (*Metrics, error) {
	cert, err := selfSignedCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := &Metrics{
		listener: ln, served: make(chan error, 1),
		label: labelEscaper.Replace(ownerUID),
	}
	m.server = &http.Server{
		Handler:           m,
		ReadHeaderTimeout: 10 * time.Second,
		// A client's failed handshake (a scanner, plain HTTP) is
		// its problem, not a line in the importer's log.
		ErrorLog:  log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	go func() { m.served <- m.server.ServeTLS(ln, "", "") }()
	return m, nil
}

// Addr is the address listened on (its port chosen when addr's was 0).
func (m *Metrics) Addr() string { return m.listener.Addr().String() }

// SetProgress shows done of total bytes as a percentage. A nil m (no
// endpoint could be started) shows nothing, as do its other methods.
func (m *Metrics) SetProgress(done, total int64) {
	if m == nil || total <= 0 {
		return
	}
	m.SetPercent(100 * float64(done) / float64(total))
}

// SetPercent shows p percent (0 to 100). The counter only grows: a p
// below what it shows is ignored, as CDI's importer ignores it. p is
// floored to hundredths, which is what the controller shows ("NN.NN%"),
// and which keeps the value out of the exponent form (1e-05) whose "1"
// the controller's expression would read as 1%.
func (m *Metrics) SetPercent(p float64) {
	if m == nil || math.IsNaN(p) {
		return
	}
	p = math.Floor(min(max(p, 0), 100)*100) / 100
	m.mu.Lock()
	defer m.mu.Unlock()
	if p > m.percent {
		m.percent = p
	}
}

// labelEscaper escapes a label value as the Prometheus text format asks.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// ServeHTTP answers every request with the counter in the Prometheus
// text format (version 0.0.4), its value never in exponent form.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	p := m.percent
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, "# HELP "+ProgressMetric+" The import progress in percentage\n"+
		"# TYPE "+ProgressMetric+" counter\n"+
		ProgressMetric+`{ownerUID="`+m.label+`"} `+strconv.FormatFloat(p, 'f', -1, 64)+"\n")
}

// Close stops serving: the requests being answered end first, within
// ctx.
func (m *Metrics) Close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	err := m.server.Shutdown(ctx)
	if served := <-m.served; !errors.Is(served, http.ErrServerClosed) && err == nil {
		err = served
	}
	return err
}

// selfSignedCert makes the endpoint's certificate: a P-256 key (quick to
// make, unlike CDI's RSA), valid for a year.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "ringcp-cdi-importer"},
		NotBefore:    now.Add(-time.Hour), // a node's clock a little behind
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
