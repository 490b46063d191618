package nbdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TLSDir makes a folder of X.509 credentials under the names nbdkit's
// --tls-certificates, qemu's tls-creds-x509 and libnbd's tls-certificates
// read: ca-cert.pem (a CA made for the test), server-cert.pem and
// server-key.pem (for localhost and 127.0.0.1), client-cert.pem and
// client-key.pem. Each call makes a new CA, so two folders do not trust
// each other.
func TLSDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert := newCert(t, nil, nil, &x509.Certificate{
		Subject: pkix.Name{CommonName: "ringcp test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign})
	writePEM(t, filepath.Join(dir, "ca-cert.pem"), "CERTIFICATE", caCert.Raw)
	for _, who := range []struct {
		name  string
		usage x509.ExtKeyUsage
	}{{"server", x509.ExtKeyUsageServerAuth}, {"client", x509.ExtKeyUsageClientAuth}} {
		key, cert := newCert(t, caKey, caCert, &x509.Certificate{
			Subject: pkix.Name{CommonName: who.name}, DNSNames: []string{"localhost"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{who.usage}})
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, filepath.Join(dir, who.name+"-cert.pem"), "CERTIFICATE", cert.Raw)
		writePEM(t, filepath.Join(dir, who.name+"-key.pem"), "PRIVATE KEY", der)
	}
	return dir
}

// newCert makes a key and a certificate from tmpl, signed by parent (self
// signed when parent is nil), valid for a day around now.
func newCert(t testing.TB, parentKey *ecdsa.PrivateKey, parent, tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Secure turns a URI Start made into its TLS form (nbds://,
// nbds+unix://) that trusts the credentials in dir; a Unix socket's
// server is checked as localhost.
func Secure(uri, dir string) string {
	scheme, rest, _ := strings.Cut(uri, ":")
	sep := "?"
	if strings.Contains(rest, "?") {
		sep = "&"
	}
	return strings.Replace(scheme, "nbd", "nbds", 1) + ":" + rest + sep + "tls-certificates=" + url.QueryEscape(dir)
}
