package main

import (
	"fmt"

	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
)

// webFlags are the flags of SRCs that are not local files: http(s) and
// s3 objects, streams, compressed data (copier.Options.Web, SrcSize,
// ExpectChecksum).
type webFlags struct {
	web     copier.WebOptions
	expect  string
	size    sizeFlag
	headers []string
}

// defineWebFlags defines them on fs.
func defineWebFlags(fs *pflag.FlagSet, w *webFlags) {
	fs.Var(&w.size, "size", "SRC's size when it does not say it (stdin, a pipe, gzip/zstd/bzip2 data): a SRC that ends elsewhere fails the copy; needed to copy such a SRC onto a device or into part of a file")
	fs.StringVar(&w.expect, "expect-checksum", "", "ALGO:HEX: the digest of SRC as published (sha256, sha512 or md5; before decompression, as SHA256SUMS lists it); exit 3 on a mismatch, and a new DST is discarded")
	fs.IntVar(&w.web.Connections, "http-connections", 0, fmt.Sprintf("range requests in flight to an http(s) or s3 SRC (default 8; also raise --queue-depth, default 8); at most %d", copier.MaxWebConnections))
	fs.StringVar(&w.web.CAFile, "ca-cert", "", "trust the CA certificates in FILE (PEM) instead of the system's, for https and s3 SRCs")
	fs.StringVar(&w.web.CertFile, "client-cert", "", "a client certificate (PEM) for https SRCs; its key in it, or in --client-key")
	fs.StringVar(&w.web.KeyFile, "client-key", "", "the key of --client-cert")
	fs.BoolVar(&w.web.Insecure, "insecure", false, "do not check an https SRC's certificate")
	fs.StringArrayVar(&w.headers, "header", nil, "'NAME: VALUE' sent with every request to an http(s) SRC (repeatable)")
	fs.StringVar(&w.web.BearerTokenFile, "bearer-token-file", "", "send the token in FILE as 'Authorization: Bearer' to the URL's own host")
	fs.StringVar(&w.web.S3Endpoint, "s3-endpoint", "", "an S3-compatible store's URL for s3://bucket/key SRCs (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's, else AWS); keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws")
	fs.StringVar(&w.web.S3Region, "s3-region", "", "the region S3 requests are signed for (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1)")
}

// apply puts them in o.
func (w *webFlags) apply(o *copier.Options) {
	o.Web, o.ExpectChecksum, o.SrcSize = w.web, w.expect, w.size.v
	o.Web.Headers = w.headers
}

// repeatable names the flags that may be given more than once.
var repeatable = map[string]bool{"header": true}
