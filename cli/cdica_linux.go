package cli

import (
	"fmt"
	"os"

	"github.com/ringcp/ringcp/copier"
	"golang.org/x/sys/unix"
)

// CDI's importer trusts the certificates of IMPORTER_CERT_DIR (and of
// the cluster proxy's) beside the system's; copier's WebOptions.CAFile
// replaces the system's. The importer gives copier one bundle of both,
// in memory (the pod's root filesystem is read-only, and no file of it
// outlives the process): a memfd named by /proc/self/fd.

// systemBundles are where Go's crypto/x509 looks for the system's
// bundle on Linux, after SSL_CERT_FILE.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// caBundle is the bundle's memfd.
type caBundle struct {
	f    *os.File
	path string
}

// newCABundle puts the system's bundle (the first one found) and files
// into one memfd.
func newCABundle(files []string) (*caBundle, error) {
	fd, err := unix.MemfdCreate("ringcp-ca-bundle", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "ringcp-ca-bundle")
	system := systemBundles
	if env := os.Getenv("SSL_CERT_FILE"); env != "" {
		system = []string{env}
	}
	for _, path := range system {
		if pem, err := os.ReadFile(path); err == nil {
			f.Write(append(pem, '\n'))
			break
		}
	}
	for _, path := range files {
		pem, err := os.ReadFile(path)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("the CA certificate %s: %w", path, err)
		}
		if _, err := f.Write(append(pem, '\n')); err != nil {
			f.Close()
			return nil, fmt.Errorf("the CA bundle: %w", err)
		}
	}
	return &caBundle{f: f, path: fmt.Sprintf("/proc/self/fd/%d", fd)}, nil
}

func (c *caBundle) close() {
	if c != nil {
		c.f.Close()
	}
}

// webOptions are the copy's options for the image's server: the flags'
// (connections), the transfer's TLS, headers and S3 store.
func (j *importJob) webOptions() (copier.WebOptions, error) {
	w := j.base.Web
	w.Insecure, w.Headers = j.t.InsecureTLS, j.t.Headers
	if len(j.t.CAFiles) > 0 {
		ca, err := newCABundle(j.t.CAFiles)
		if err != nil {
			return w, err
		}
		j.ca, w.CAFile = ca, ca.path
	}
	if j.t.S3 != nil {
		setS3Keys(j.t.S3)
		w.S3Endpoint, w.S3Region = j.t.S3.Endpoint, j.t.S3.Region
	}
	return w, nil
}
