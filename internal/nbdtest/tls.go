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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TLSDir makes a folder of X.509 credentials for the test (WriteTLSDir).
// Each call makes a new CA, so two folders do not trust each other.
func TLSDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteTLSDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteTLSDir writes X.509 credentials into dir under the names nbdkit's
// --tls-certificates, qemu's tls-creds-x509 and libnbd's tls-certificates
// read: ca-cert.pem (a new CA), server-cert.pem and server-key.pem (for
// localhost, 127.0.0.1 and ::1), client-cert.pem and client-key.pem.
func WriteTLSDir(dir string) error {
	caKey, caCert, err := newCert(nil, nil, &x509.Certificate{
		Subject: pkix.Name{CommonName: "ringcp test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign})
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca-cert.pem"), "CERTIFICATE", caCert.Raw); err != nil {
		return err
	}
	for _, who := range []struct {
		name  string
		usage x509.ExtKeyUsage
	}{{"server", x509.ExtKeyUsageServerAuth}, {"client", x509.ExtKeyUsageClientAuth}} {
		key, cert, err := newCert(caKey, caCert, &x509.Certificate{
			Subject: pkix.Name{CommonName: who.name}, DNSNames: []string{"localhost"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{who.usage}})
		if err != nil {
			return err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, who.name+"-cert.pem"), "CERTIFICATE", cert.Raw); err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, who.name+"-key.pem"), "PRIVATE KEY", der); err != nil {
			return err
		}
	}
	return nil
}

// newCert makes a key and a certificate from tmpl, signed by parent (self
// signed when parent is nil), valid for a day around now.
func newCert(parentKey *ecdsa.PrivateKey, parent, tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, big.NewInt(1<<62)); err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
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
	return strings.Replace(scheme, "nbd", "nbds", 1) + ":" + rest + sep + "tls-certificates=" + escape(dir)
}
