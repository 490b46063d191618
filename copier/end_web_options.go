package copier

import (
	"fmt"
	"io"
	"time"

	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/unpack"
)

// WebOptions tune the SRCs that are HTTP(S) URLs and S3 objects
// (end_web_linux.go).
type WebOptions struct {
	// Connections is how many range requests are in flight at once; 0 is
	// httpobj.DefaultConnections.
	Connections int
	// CAFile replaces the system's CAs with the certificates in it;
	// CertFile and KeyFile are a client certificate and its key.
	CAFile, CertFile, KeyFile string
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// Headers are sent with every request, each "Name: value".
	Headers []string
	// BearerTokenFile holds a token sent as "Authorization: Bearer" to the
	// URL's own host.
	BearerTokenFile string
	// Retries bounds the retries of a transient failure (0: the default;
	// negative: none); StallTimeout fails a request that delivers nothing
	// for so long (0: the default).
	Retries      int
	StallTimeout time.Duration
	// S3Endpoint is an S3-compatible store's URL; "" takes
	// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's, else AWS's.
	// S3Region and S3Profile likewise ("": the environment's).
	S3Endpoint, S3Region, S3Profile string
	// Logf, when set, hears what the transport would say under -v (a
	// retry and why, a server without ranges).
	Logf func(format string, args ...any)
}

// MaxWebConnections bounds WebOptions.Connections.
const MaxWebConnections = 64

// StreamOptions say how a SRC read in order is read: standard input ("-"),
// a pipe, compressed data.
type StreamOptions struct {
	// Stdin is what "-" reads; nil is the process's standard input.
	Stdin io.Reader
	// Threads is how many pieces of a compressed SRC decode at once (0:
	// all cores).
	Threads int
}

// httpOptions is the httpobj view of w.
func (w WebOptions) httpOptions() httpobj.Options {
	return httpobj.Options{Connections: w.Connections, CAFile: w.CAFile, CertFile: w.CertFile, KeyFile: w.KeyFile,
		Insecure: w.Insecure, Headers: w.Headers, BearerTokenFile: w.BearerTokenFile,
		Retries: w.Retries, StallTimeout: w.StallTimeout, Logf: w.Logf}
}

// checkWeb refuses values no copy can take in the options of this file:
// the connections, the expected checksum, the source format.
func (o *Options) checkWeb() error {
	bad := func(field, reason string) error { return refuse(KindBadInput, "", reason).on(field) }
	if c := o.Web.Connections; c < 0 || c > MaxWebConnections {
		return bad("Web.Connections", fmt.Sprintf("Options.Web.Connections %d: out of range (1 to %d)", c, MaxWebConnections))
	}
	if o.SrcSize < 0 {
		return bad("SrcSize", fmt.Sprintf("Options.SrcSize %d: must not be negative", o.SrcSize))
	}
	if o.ExpectChecksum != "" {
		if _, err := expectsum.Parse(o.ExpectChecksum); err != nil {
			return bad("ExpectChecksum", fmt.Sprintf("Options.ExpectChecksum %q: %v", o.ExpectChecksum, err))
		}
	}
	if o.SrcFormat != "" && o.SrcFormat != FormatAuto && o.SrcFormat != SrcFormatRaw && o.SrcFormat != FormatQcow2 {
		if f, ok := unpack.ParseFormat(o.SrcFormat); !ok || f == unpack.Auto {
			return bad("SrcFormat", fmt.Sprintf("unknown source format %q: ringcp reads raw and qcow2 (auto tells them apart), and xz, gzip, zstd and bzip2 (recognized without asking); raw copies SRC's bytes as they are; convert other images with qemu-img convert -O raw", o.SrcFormat))
		}
	}
	return nil
}
